package dropin_test

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

// Code written against client-go's interfaces runs on ours: a
// cache.SharedIndexInformer, a client-go handler, cache.WaitFor on the
// registration's checker, a lister-style read of the indexer.
func ExampleNewSharedIndexInformer() {
	srv, err := apiserver.Start(apiserver.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Stop()
	for _, name := range []string{"web-1", "web-2"} {
		if _, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name}}); err != nil {
			panic(err)
		}
	}
	lw := srv.ListerWatcher(apiserver.Pods, metav1.NamespaceAll)

	var informer cache.SharedIndexInformer = dropin.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
	})
	reg, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { fmt.Println("add", obj.(*corev1.Pod).Name) },
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go informer.RunWithContext(ctx)
	cache.WaitFor(ctx, "", reg.HasSyncedChecker())

	pods, _ := informer.GetIndexer().ByIndex(cache.NamespaceIndex, "demo")
	var names []string
	for _, p := range pods {
		names = append(names, p.(*corev1.Pod).Name)
	}
	slices.Sort(names)
	fmt.Println("cached in demo:", names)
	// Output:
	// add web-1
	// add web-2
	// cached in demo: [web-1 web-2]
}

// The traced queue behaves as the queue it wraps: a key added twice while
// it waits is served once.
func ExampleNewTracedQueue() {
	q := dropin.NewTracedQueue("example", workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()))
	defer q.ShutDown()
	q.Add("demo/web-1")
	q.Add("demo/web-1") // merged: demo/web-1 is still waiting
	q.Add("demo/web-2")
	fmt.Println("waiting:", q.Len())
	for q.Len() > 0 {
		key, _ := q.Get()
		fmt.Println("reconcile", key)
		q.Done(key)
	}
	// Output:
	// waiting: 2
	// reconcile demo/web-1
	// reconcile demo/web-2
}
