package informers_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	factory "github.com/informer-anatomy/informer-anatomy/chapters/06-factory"
	"github.com/informer-anatomy/informer-anatomy/demo/informers"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

// For builds the informer on the queue asked for, through the factory's
// InformerFor: the typed accessor then returns that same informer, and the
// probe has seen the reflector's first request, a stream.
func ExampleFor() {
	srv, _ := apiserver.Start(apiserver.Options{})
	defer srv.Stop()
	_, _ = srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web-1"}})
	client, _ := factory.NewForConfig(srv.Config())
	f := factory.NewSharedInformerFactoryWithOptions(client, 0, factory.WithNamespace("demo"))
	inf, probe, err := informers.For(f, client, informers.Spec{
		Resource: corev1.SchemeGroupVersion.WithResource("pods"), Namespace: "demo", Queue: processor.DeltaFIFOQueue,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("the factory's pod informer is this one:", f.Core().V1().Pods().Informer() == inf)
	// The factory's WaitForCacheSync waits for the queue to have handed
	// out its initial list; on the DeltaFIFO that is when the last key is
	// popped, before it is processed into the cache (as upstream's). A
	// handler's registration is synced once every initial object has been
	// cached and delivered to it: what a controller waits for before it
	// reads the cache (client-go's cache.WaitForCacheSync(stop,
	// reg.HasSynced)). Reading Cached after the factory's wait alone read 0
	// once, in a CI run.
	reg, err := inf.AddEventHandler(processor.ResourceEventHandlerFuncs{})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); f.Shutdown() }()
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	processor.WaitForCacheSync(ctx.Done(), reg.HasSynced)
	st, _ := processor.ReadStats(inf)
	fmt.Println("queue:", st.Queue, "cached:", st.Cached, "streams:", probe.State().Streams)
	// Output:
	// the factory's pod informer is this one: true
	// queue: deltafifo cached: 1 streams: 1
}
