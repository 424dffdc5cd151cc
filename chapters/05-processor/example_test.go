package processor_test

import (
	"context"
	"fmt"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/kube"
)

// One informer, one handler, against the embedded API server: the initial
// list arrives as adds flagged initial, then changes arrive as they happen.
func ExampleNewSharedIndexInformer() {
	srv, _ := apiserver.Start(apiserver.Options{})
	defer srv.Stop()
	_, _ = srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1"}})
	_, _ = srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-2"}})

	client, _ := kube.RESTClientFor(srv.Config(), corev1.SchemeGroupVersion)
	lw := reflector.NewListWatchFromClient(client, "pods", metav1.NamespaceAll, fields.Everything())
	informer := processor.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, nil)

	var mu sync.Mutex
	var events []string
	deleted := make(chan struct{})
	reg, _ := informer.AddEventHandler(processor.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, fmt.Sprintf("add %s initial=%v", obj.(*corev1.Pod).Name, initial))
		},
		DeleteFunc: func(obj any) {
			mu.Lock()
			events = append(events, "delete "+obj.(*corev1.Pod).Name)
			mu.Unlock()
			close(deleted)
		},
	})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go informer.RunWithContext(ctx)
	processor.WaitForCacheSync(ctx.Done(), informer.HasSynced, reg.HasSynced)

	_ = srv.Delete(apiserver.Pods, "default", "web-1")
	<-deleted

	mu.Lock()
	defer mu.Unlock()
	sort.Strings(events[:2]) // the initial adds come in no particular order
	for _, e := range events {
		fmt.Println(e)
	}
	// Output:
	// add web-1 initial=true
	// add web-2 initial=true
	// delete web-1
}
