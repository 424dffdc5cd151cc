package main

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-anatomy/informer-anatomy/dropin"
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

// TestNewQueueIsTracedAndWorks: NewQueue's queue is the traced wrapper,
// and behaves as a workqueue (merges a repeated add, serves it once).
func TestNewQueueIsTracedAndWorks(t *testing.T) {
	q := NewQueue("test", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	require.IsType(t, &dropin.TracedQueue[reconcile.Request]{}, q)
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
