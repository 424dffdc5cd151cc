package crqueue_test

import (
	"context"
	"fmt"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-anatomy/informer-anatomy/dropin/crqueue"
)

// NewQueue's queue is still a priority queue: controller-runtime's handler
// adds the initial list at low priority, so a live change added after it
// is reconciled first.
func ExampleNewQueue() {
	q := crqueue.NewQueue("example", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	h := &handler.EnqueueRequestForObject{}
	ctx := context.Background()
	h.Create(ctx, event.CreateEvent{Object: cm("web-1", "1"), IsInInitialList: true}, q)
	h.Create(ctx, event.CreateEvent{Object: cm("web-2", "1"), IsInInitialList: true}, q)
	h.Update(ctx, event.UpdateEvent{ObjectOld: cm("web-3", "1"), ObjectNew: cm("web-3", "2")}, q)
	for q.Len() > 0 {
		key, _ := q.Get()
		fmt.Println("reconcile", key)
		q.Done(key)
	}
	// Output:
	// reconcile ns/web-3
	// reconcile ns/web-1
	// reconcile ns/web-2
}
