package dropin_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/handlerctx"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// controllerUnderTest is a client-go style controller on our informer: a
// handler that puts the keys it wants on a traced queue, and workers that
// Get, reconcile with dropin.ReconcileContext, and Done.
type controllerUnderTest struct {
	inf   *dropin.Informer
	queue workqueue.TypedRateLimitingInterface[string]
}

// newControllerUnderTest builds it on res, tracing into tp; wants picks the
// objects whose keys are queued.
func newControllerUnderTest(t *testing.T, name string, srv *apiserver.Server, res apiserver.Resource, example runtime.Object,
	tp trace.TracerProvider, wants func(metav1.Object) bool) *controllerUnderTest {
	t.Helper()
	inf := dropin.NewSharedIndexInformer(srv.ListerWatcher(res, metav1.NamespaceAll), example, 0, cache.Indexers{}).(*dropin.Informer)
	require.NoError(t, inf.SetTracerProvider(tp))
	q := dropin.NewTracedQueue(name, workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()))
	q.(*dropin.TracedQueue[string]).SetTracerProvider(tp)
	enqueue := func(obj any) {
		m, err := meta(obj)
		if err != nil || !wants(m) {
			return
		}
		key, err := cache.MetaNamespaceKeyFunc(obj)
		require.NoError(t, err)
		q.Add(key)
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	})
	require.NoError(t, err)
	return &controllerUnderTest{inf: inf, queue: q}
}

func meta(obj any) (metav1.Object, error) {
	if m, ok := obj.(metav1.Object); ok {
		return m, nil
	}
	return nil, assert.AnError
}

// run starts the informer and workers calling reconcile with
// ReconcileContext's ctx, until the test ends.
func (c *controllerUnderTest) run(t *testing.T, workers int, reconcile func(ctx context.Context, key string)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { c.inf.RunWithContext(ctx) })
	for range workers {
		wg.Go(func() {
			for {
				key, shutdown := c.queue.Get()
				if shutdown {
					return
				}
				reconcile(dropin.ReconcileContext(ctx), key)
				c.queue.Done(key)
			}
		})
	}
	t.Cleanup(func() {
		cancel()
		c.queue.ShutDown()
		wg.Wait()
	})
}

func ended(rec *tracetest.SpanRecorder, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func spanAttr(s sdktrace.ReadOnlySpan, k string) string {
	for _, a := range s.Attributes() {
		if string(a.Key) == k {
			return a.Value.String()
		}
	}
	return ""
}

func byID(rec *tracetest.SpanRecorder) map[trace.SpanID]sdktrace.ReadOnlySpan {
	out := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		out[s.SpanContext().SpanID()] = s
	}
	return out
}

func readOnlyToSpancheck(spans []sdktrace.ReadOnlySpan) []spancheck.Span {
	out := make([]spancheck.Span, len(spans))
	for i, s := range spans {
		out[i] = spancheck.FromReadOnly(s)
	}
	return out
}

// A span started from ReconcileContext's ctx in a client-go style worker is
// the child of that key's workqueue.process, and so in the trace of the
// watch event that caused the reconcile.
func TestReconcileContextCarriesTheProcessSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	srv := startServer(t)
	_, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "listed"}})
	require.NoError(t, err)

	c := newControllerUnderTest(t, "pods", srv, apiserver.Pods, &corev1.Pod{}, tp, func(metav1.Object) bool { return true })
	c.run(t, 1, func(ctx context.Context, key string) {
		_, span := tp.Tracer("test").Start(ctx, "reconcile "+key)
		span.End()
	})
	testutil.Eventually(t, "the listed pod reconciled", func() bool { return len(ended(rec, "reconcile ns/listed")) == 1 })
	_, err = srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "watched"}})
	require.NoError(t, err)
	testutil.Eventually(t, "the watched pod reconciled", func() bool { return len(ended(rec, "reconcile ns/watched")) == 1 })
	// The reconcile can end before the informer's own spans above the
	// handler call (distribute, HandleDeltas, the watch root) end on the
	// informer's goroutine: a loaded machine once caught the chain with
	// its top still open ("root addCh"). Wait until every chain reads
	// whole (up to testutil.Limit), so that what is checked below is the
	// chain, not the race; a chain that never becomes whole still fails
	// below, with the check's own error.
	// The worker's Done, which ends the process span, also comes after
	// the reconcile's span has ended: wait for each reconcile's parent
	// too (a loaded machine caught it still open).
	testutil.WaitFor(func() bool {
		for _, chain := range spancheck.NewIndex(readOnlyToSpancheck(rec.Ended())).ReconcileChains() {
			if chain.Check() != nil {
				return false
			}
		}
		ids := byID(rec)
		for _, key := range []string{"ns/listed", "ns/watched"} {
			if _, ok := ids[ended(rec, "reconcile "+key)[0].Parent().SpanID()]; !ok {
				return false
			}
		}
		return true
	})

	ix := spancheck.NewIndex(readOnlyToSpancheck(rec.Ended()))
	for key, root := range map[string]string{"ns/listed": "ListAndWatch watchlist", "ns/watched": "ListAndWatch watch"} {
		r := ended(rec, "reconcile "+key)[0]
		parent, ok := byID(rec)[r.Parent().SpanID()]
		require.True(t, ok, "%s: the reconcile's span has an exported parent", key)
		assert.Equal(t, tracing.SpanWorkqueueProcess, parent.Name(), key)
		assert.Equal(t, key, spanAttr(parent, string(tracing.KeyWorkqueueKey)), key)
		var found bool
		for _, chain := range ix.ReconcileChains() {
			if chain.Spans[0].SpanID != parent.SpanContext().SpanID() {
				continue
			}
			found = true
			require.NoError(t, chain.Check(), key)
			require.True(t, chain.FromWatch(), key)
			assert.Equal(t, root, chain.Root().Name, key)
			assert.Equal(t, chain.Root().TraceID, r.SpanContext().TraceID(), "%s: the reconcile's own span is in the watch event's trace", key)
		}
		assert.True(t, found, key)
	}
}

// Outside a reconcile, ctx comes back as it was: with tracing off, before
// Get, after Done, and on a goroutine other than the one that called Get.
func TestReconcileContextOutsideAReconcileReturnsCtx(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "mine")
	require.True(t, dropin.ReconcileContext(ctx) == ctx, "nothing registered")

	off := tracedQueueOn[string](t, "off", noop.NewTracerProvider())
	off.Add("a")
	item, _ := off.Get()
	require.True(t, dropin.ReconcileContext(ctx) == ctx, "tracing off: nothing registered")
	off.Done(item)

	rec := tracetest.NewSpanRecorder()
	on := tracedQueueOn[string](t, "on", sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	on.Add("a")
	item, _ = on.Get()
	inside := dropin.ReconcileContext(ctx)
	require.True(t, trace.SpanContextFromContext(inside).IsValid(), "between Get and Done")
	assert.Equal(t, "mine", inside.Value(key{}), "ctx's values stay")
	done := make(chan context.Context)
	go func() { done <- dropin.ReconcileContext(ctx) }()
	require.True(t, <-done == ctx, "another goroutine is not reconciling")
	on.Done(item)
	require.True(t, dropin.ReconcileContext(ctx) == ctx, "after Done")
	require.Zero(t, handlerctx.Active())

	processes := ended(rec, tracing.SpanWorkqueueProcess)
	require.Len(t, processes, 1)
	assert.Equal(t, processes[0].SpanContext(), trace.SpanContextFromContext(inside))
}

// A span the reconcile already started under its process span stays the
// parent: ReconcileContext does not reach past it. A span of another trace
// in ctx is replaced.
func TestReconcileContextKeepsASpanOfTheSameTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	q := tracedQueueOn[string](t, "q", tp)
	q.Add("a")
	item, _ := q.Get()
	defer q.Done(item)

	ctx := dropin.ReconcileContext(context.Background())
	inner, span := tp.Tracer("test").Start(ctx, "step")
	defer span.End()
	require.True(t, dropin.ReconcileContext(inner) == inner)

	other, otherSpan := tp.Tracer("test").Start(context.Background(), "elsewhere")
	otherSpan.End()
	assert.Equal(t, trace.SpanContextFromContext(ctx), trace.SpanContextFromContext(dropin.ReconcileContext(other)))
}

// Two workers reconciling at the same time each get their own key's
// process span.
func TestReconcileContextPerWorker(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	q := tracedQueueOn[string](t, "q", tp)
	const rounds = 20
	for round := range rounds {
		q.Add("a")
		q.Add("b")
		var got, both sync.WaitGroup
		got.Add(2)
		both.Add(2)
		for range 2 {
			go func() {
				defer both.Done()
				key, _ := q.Get()
				got.Done()
				got.Wait() // both keys taken: two reconciles in flight
				_, span := tp.Tracer("test").Start(dropin.ReconcileContext(context.Background()), "reconcile "+key)
				span.SetAttributes(tracing.KeyWorkqueueKey.String(key))
				span.End()
				q.Done(key)
			}()
		}
		both.Wait()
		_ = round
	}
	ids := byID(rec)
	var reconciles int
	for _, s := range rec.Ended() {
		if !strings.HasPrefix(s.Name(), "reconcile ") {
			continue
		}
		reconciles++
		parent, ok := ids[s.Parent().SpanID()]
		require.True(t, ok, s.Name())
		require.Equal(t, tracing.SpanWorkqueueProcess, parent.Name())
		require.Equal(t, spanAttr(s, string(tracing.KeyWorkqueueKey)), spanAttr(parent, string(tracing.KeyWorkqueueKey)),
			"each worker's reconcile hangs from its own key's process span")
	}
	assert.Equal(t, 2*rounds, reconciles)
	assert.Zero(t, handlerctx.Active())
}

// StampTraceparent writes the reconcile's span, found through the
// goroutine when ctx has none, and leaves the object alone with no span.
func TestStampTraceparent(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Annotations: map[string]string{tracing.AnnotationTraceparent: "earlier"}}}
	require.False(t, dropin.StampTraceparent(context.Background(), cm), "no span: nothing to stamp")
	assert.Equal(t, "earlier", cm.Annotations[tracing.AnnotationTraceparent], "left as it was")

	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	q := tracedQueueOn[string](t, "q", tp)
	q.Add("a")
	item, _ := q.Get()
	fresh := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "y"}}
	require.True(t, dropin.StampTraceparent(context.Background(), fresh), "the reconcile's process span, through the goroutine")
	ctx, span := tp.Tracer("test").Start(dropin.ReconcileContext(context.Background()), "write")
	require.True(t, dropin.StampTraceparent(ctx, cm), "ctx's own span")
	span.End()
	q.Done(item)

	process := ended(rec, tracing.SpanWorkqueueProcess)[0]
	assert.Equal(t, tracing.FormatTraceparent(process.SpanContext()), fresh.Annotations[tracing.AnnotationTraceparent])
	assert.Equal(t, tracing.FormatTraceparent(span.SpanContext()), cm.Annotations[tracing.AnnotationTraceparent])
}
