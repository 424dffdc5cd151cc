package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-anatomy/informer-anatomy/dropin/crqueue"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// TestReconcileStampsTheStatusWithItsProcessSpan does what a
// controller-runtime worker does (processNextWorkItem: the queue's Get,
// Reconcile, Done, on one goroutine) on NewQueue's traced queue, with a
// fake client: the status written is stamped with the key's
// workqueue.process span, which Reconcile found with
// dropin.ReconcileContext; a second reconcile with nothing to change
// writes nothing (the stamp does not force a write).
func TestReconcileStampsTheStatusWithItsProcessSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	q := NewQueue("test", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	q.(*crqueue.TracedPriorityQueue[reconcile.Request]).SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	defer q.ShutDown()
	watched := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", UID: "uid-app",
		Labels: map[string]string{WatchLabel: "true"}}, Data: map[string]string{"a": "1"}}
	r := &Reconciler{Client: fake.NewClientBuilder().WithObjects(watched).Build()}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "app"}}
	statusKey := client.ObjectKey{Namespace: "ns", Name: "app" + StatusSuffix}

	reconcileOnce := func() {
		q.Add(req)
		got, shutdown := q.Get()
		require.False(t, shutdown)
		_, err := r.Reconcile(context.Background(), got)
		require.NoError(t, err)
		q.Done(got)
	}
	reconcileOnce()
	var st corev1.ConfigMap
	require.NoError(t, r.Get(context.Background(), statusKey, &st))
	sc, _, present := tracing.Traceparent(&st)
	require.True(t, present, "stamped")
	var processes []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == tracing.SpanWorkqueueProcess {
			processes = append(processes, s)
		}
	}
	require.Len(t, processes, 1)
	require.Equal(t, processes[0].SpanContext().SpanID(), sc.SpanID(), "the stamp names the reconcile's process span")

	written := st.ResourceVersion
	reconcileOnce()
	require.NoError(t, r.Get(context.Background(), statusKey, &st))
	require.Equal(t, written, st.ResourceVersion, "nothing changed, nothing written")
}
