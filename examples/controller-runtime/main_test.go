package main

import (
	"context"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/dropin/crqueue"
)

// TestManagerOptionsUseOurInformer: the manager's cache builds informers
// with dropin.NewSharedIndexInformer.
func TestManagerOptionsUseOurInformer(t *testing.T) {
	got := ManagerOptions("ns").Cache.NewInformer
	require.NotNil(t, got)
	require.Equal(t, reflect.ValueOf(dropin.NewSharedIndexInformer).Pointer(), reflect.ValueOf(got).Pointer())
}

// TestManagerOptionsReadYourWrites: the manager's client waits for the
// cache to see its own writes (e2e_readyourwrites_test.go shows it does).
func TestManagerOptionsReadYourWrites(t *testing.T) {
	c := ManagerOptions("").Client.Cache
	require.NotNil(t, c)
	require.True(t, ptr.Deref(c.EnableReadYourWritesConsistency, false))
}

// TestNewQueueIsTracedAndWorks: NewQueue's queue is the traced priority
// queue, and behaves as a workqueue (merges a repeated add, serves it once).
func TestNewQueueIsTracedAndWorks(t *testing.T) {
	q := NewQueue("test", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	require.IsType(t, &crqueue.TracedPriorityQueue[reconcile.Request]{}, q)
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}
	q.Add(req)
	q.Add(req)
	require.Eventually(t, func() bool { return q.Len() == 1 }, 5e9, 1e6, "the repeated add was merged")
	got, shutdown := q.Get()
	require.False(t, shutdown)
	require.Equal(t, req, got)
	q.Done(got)
	require.Zero(t, q.Len())
}

// TestNewQueueKeepsPriorities: controller-runtime's handler, given
// NewQueue's queue, adds the initial list at low priority, so a live change
// added after it is reconciled first, as on controller-runtime's default
// queue. (With the queue behind dropin.NewTracedQueue, as before, the
// handler saw no priority queue and the live change came last.)
func TestNewQueueKeepsPriorities(t *testing.T) {
	q := NewQueue("test", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	h := &handler.EnqueueRequestForObject{}
	cm := func(name, rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
	}
	for _, name := range []string{"a", "b"} {
		h.Create(context.Background(), event.CreateEvent{Object: cm(name, "1"), IsInInitialList: true}, q)
	}
	h.Update(context.Background(), event.UpdateEvent{ObjectOld: cm("c", "1"), ObjectNew: cm("c", "2")}, q)
	require.Equal(t, 3, q.Len())
	var order []string
	for range 3 {
		item, _ := q.Get()
		order = append(order, item.Name)
		q.Done(item)
	}
	require.Equal(t, []string{"c", "a", "b"}, order, "the live change first, then the initial list in its order")
}
