//go:build e2e

package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/examples/clientgo-controller/controller"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// TestNextControllerLinksToTheWriterOnARealAPIServer: from one controller
// to the next on kube-apiserver. Controller A is the client-go example,
// which stamps the status ConfigMap it writes with its reconcile's span;
// controller B watches status ConfigMaps on an informer of its own (ours,
// through dropin) with a traced queue and a worker on ReconcileContext.
// For the status's create (ADDED) and its update (MODIFIED), B's
// "ListAndWatch watch" root links to the workqueue.process of A's reconcile
// that wrote it, and B's reconcile is in that root's trace.
func TestNextControllerLinksToTheWriterOnARealAPIServer(t *testing.T) {
	_, client, ns := clientsetNamespace(t, "e2e-handoff")
	rec := tracetest.NewSpanRecorder()
	previous := otel.GetTracerProvider()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(previous) })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cms := client.CoreV1().ConfigMaps(ns)
	var wg sync.WaitGroup
	defer wg.Wait()

	// Controller B, first, so that A's writes reach it as watch events.
	bInformer := dropin.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return cms.List(ctx, o) },
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return cms.Watch(ctx, o)
		},
	}, &corev1.ConfigMap{}, 0, cache.Indexers{})
	bQueue := dropin.NewTracedQueue("B", workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()))
	enqueue := func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil && strings.HasSuffix(key, controller.StatusSuffix) {
			bQueue.Add(key)
		}
	}
	_, err := bInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }})
	require.NoError(t, err)
	wg.Go(func() { bInformer.RunWithContext(ctx) })
	wg.Go(func() {
		for {
			key, shutdown := bQueue.Get()
			if shutdown {
				return
			}
			_, span := otel.Tracer("e2e").Start(dropin.ReconcileContext(ctx), "B reconciles "+key)
			span.End()
			bQueue.Done(key)
		}
	})
	defer bQueue.ShutDown()
	require.True(t, cache.WaitForCacheSync(ctx.Done(), bInformer.HasSynced))

	// Controller A: the example.
	scope := dropin.FactoryScope{Namespace: ns}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, scope.Options()...)
	controller.UseDropinInformer(factory, scope)
	a, err := controller.New(client, factory.Core().V1().ConfigMaps())
	require.NoError(t, err)
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	aDone := make(chan error, 1)
	go func() { aDone <- a.Run(ctx, 2) }()
	defer func() { cancel(); require.NoError(t, <-aDone) }()

	bReconciles := func() int { return countSpans(rec, "B reconciles "+ns+"/app"+controller.StatusSuffix) }
	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Labels: map[string]string{controller.WatchLabel: "true"}},
		Data: map[string]string{"a": "1"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return bReconciles() >= 1 }, 30*time.Second, 20*time.Millisecond, "B reconciled A's create of the status")
	created.Data["b"] = "2"
	_, err = cms.Update(ctx, created, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return bReconciles() >= 2 }, 30*time.Second, 20*time.Millisecond, "B reconciled A's update of the status")
	// A stamps its write with its reconcile's workqueue.process span, which
	// ends only after the reconcile returns: B can reconcile the write
	// before that (a CI run read the spans then and found no writer). Wait
	// until every writer B's roots link to has ended.
	require.Eventually(t, func() bool {
		var spans []spancheck.Span
		for _, s := range rec.Ended() {
			spans = append(spans, spancheck.FromReadOnly(s))
		}
		ix := spancheck.NewIndex(spans)
		for _, c := range ix.ReconcileChains() {
			if c.Spans[0].Attr(tracing.KeyWorkqueueName) != "B" || !c.Complete {
				continue
			}
			for _, l := range c.Root().WriterLinks {
				if ix.ByID[l.SpanID()] == nil {
					return false
				}
			}
		}
		return true
	}, 30*time.Second, 20*time.Millisecond, "A's stamping spans ended")

	var spans []spancheck.Span
	for _, s := range rec.Ended() {
		spans = append(spans, spancheck.FromReadOnly(s))
	}
	ix := spancheck.NewIndex(spans)
	events := map[string]bool{}
	for _, c := range ix.ReconcileChains() {
		if c.Spans[0].Attr(tracing.KeyWorkqueueName) != "B" {
			continue
		}
		require.NoError(t, c.Check())
		require.True(t, c.FromWatch(), "%s", c)
		root := c.Root()
		require.Equal(t, tracing.SpanRootPrefix+"watch", root.Name)
		require.Len(t, root.WriterLinks, 1, "%s: B's root links to the writer", c)
		writer := ix.ByID[root.WriterLinks[0].SpanID()]
		require.NotNil(t, writer, "A's span was recorded")
		require.Equal(t, tracing.SpanWorkqueueProcess, writer.Name, "A stamped with its reconcile's process span (ReconcileContext)")
		require.Equal(t, ns+"/app", writer.Attr(tracing.KeyWorkqueueKey))
		require.NotEqual(t, writer.TraceID, root.TraceID, "a link, not a parent")
		events[root.Attr(tracing.KeyEventType)] = true
	}
	require.True(t, events["ADDED"] && events["MODIFIED"], "B's reconciles of the status's create and update: %v", events)
}

func countSpans(rec *tracetest.SpanRecorder, name string) int {
	n := 0
	for _, s := range rec.Ended() {
		if s.Name() == name {
			n++
		}
	}
	return n
}
