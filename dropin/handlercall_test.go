package dropin_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/handlerctx"
	"github.com/informer-anatomy/informer-anatomy/internal/queuetrace"
)

// registrations records, for each handler call, what a traced queue's Add
// made in it would find in internal/handlerctx: "traced", "untraced" or
// "none".
type registrations struct {
	mu  sync.Mutex
	got map[string]string
}

func (r *registrations) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		sc, ok := handlerctx.Current()
		what := "none"
		switch {
		case ok && sc.IsValid():
			what = "traced"
		case ok:
			what = "untraced"
		}
		key, _ := cache.MetaNamespaceKeyFunc(obj)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.got[key] = what
	}}
}

// noTracedQueueAlive waits for the traced queues of earlier tests that
// were dropped without a ShutDown to be collected (queuetrace.New counts
// a queue alive until then), and fails if one is still held.
func noTracedQueueAlive(t *testing.T) {
	t.Helper()
	for range 100 {
		if !queuetrace.Alive() {
			return
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the cleanups run on their own goroutine
	}
	t.Fatal("a traced queue of an earlier test is still alive: not shut down and still held")
}

// TestHandlerCallsRegisterOnlyWhileATracedQueueIsAlive: dropin's handler
// adapter registers a handler call (internal/handlerctx: a lock per call)
// only while some traced queue could look it up.
// With tracing on and a TraceFilter naming one pod of three, no traced
// queue in the process: no call is registered. With a traced queue alive,
// the traced pod's call is registered with its span and the others as
// untraced, so that the queue leaves them out. With tracing off nothing is.
// Before, chapter 5 registered every call made while tracing was on,
// queue or no queue.
func TestHandlerCallsRegisterOnlyWhileATracedQueueIsAlive(t *testing.T) {
	s := newServer(t, "a", "b", "c")
	recording := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	for _, c := range []struct {
		name  string
		tp    trace.TracerProvider
		queue bool
		want  map[string]string
	}{
		{"no traced queue", recording, false, map[string]string{"ns/a": "none", "ns/b": "none", "ns/c": "none"}},
		{"a traced queue alive", recording, true, map[string]string{"ns/a": "untraced", "ns/b": "traced", "ns/c": "untraced"}},
		{"tracing off", tracenoop.NewTracerProvider(), true, map[string]string{"ns/a": "none", "ns/b": "none", "ns/c": "none"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			noTracedQueueAlive(t)
			if c.queue {
				q := dropin.NewTracedQueue("alive", newClientGoQueue())
				defer q.ShutDown()
				require.True(t, queuetrace.Alive())
			}
			synctest.Test(t, func(t *testing.T) {
				inf := dropin.NewSharedIndexInformer(inProcessLW(s.srv), &corev1.Pod{}, 0, nil)
				require.NoError(t, inf.(*dropin.Informer).SetTracerProvider(c.tp))
				require.NoError(t, inf.(*dropin.Informer).SetTraceFilter(deltafifo.TraceKeys("ns/b")))
				r := &registrations{got: map[string]string{}}
				_, err := inf.AddEventHandler(r.handler())
				require.NoError(t, err)
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { defer close(done); inf.RunWithContext(ctx) }()
				synctest.Wait()
				cancel()
				<-done
				require.Equal(t, c.want, r.got)
				require.Zero(t, handlerctx.Active())
			})
		})
	}
	noTracedQueueAlive(t) // the ShutDowns above took their queues out
}

// informerRootsDropped samples no root but the workqueue's: the informer's
// traces (every ListAndWatch and AddEventHandler root) are sampled out, a
// root workqueue.add is sampled, and a child follows its parent. It stands
// for a ratio sampler's two outcomes, chosen by span name so that the test
// knows which.
type informerRootsDropped struct{}

func (informerRootsDropped) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	parent := trace.SpanContextFromContext(p.ParentContext)
	sampled := strings.HasPrefix(p.Name, "workqueue.")
	if parent.IsValid() {
		sampled = parent.IsSampled()
	}
	if !sampled {
		return sdktrace.SamplingResult{Decision: sdktrace.Drop, Tracestate: parent.TraceState()}
	}
	return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample, Tracestate: parent.TraceState()}
}

func (informerRootsDropped) Description() string { return "informerRootsDropped" }

// TestSampledOutHandlerCallsAddFollowsTheRoot: a change whose root the
// sampler dropped stays out of the traces past the handler. Its handler
// call is registered as untraced, so a traced queue's Add made in it makes
// no span; the key's process is untraced too, and the reconcile's own
// spans, started from ReconcileContext's ctx, are dropped by the sampler
// following the unsampled parent; a requeue from the reconcile
// (AddRateLimited) makes no span either. The sampler here keeps every
// root named workqueue.*: the old code's Add, made in a call it told
// nothing, was such a root and started a trace with no watch event above
// it (issue 37: 17 of 31 reconciles on the page at 1%).
func TestSampledOutHandlerCallsAddFollowsTheRoot(t *testing.T) {
	s := newServer(t, "a", "b")
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(informerRootsDropped{}), sdktrace.WithSpanProcessor(rec))
		r := &registrations{got: map[string]string{}}
		record := r.handler()
		q, stop := startTracedPipeline(t, s.srv, tp, nil, func(obj any) { record.OnAdd(obj, false) })
		requeued := false
		var reconciles []trace.SpanContext // what each reconcile's ctx carried
		for q.Len() > 0 {
			item, _ := q.Get()
			ctx := dropin.ReconcileContext(context.Background())
			reconciles = append(reconciles, trace.SpanContextFromContext(ctx))
			_, span := tp.Tracer("test").Start(ctx, "reconcile "+item)
			span.End()
			if !requeued {
				q.AddRateLimited(item)
				requeued = true
			}
			q.Forget(item)
			q.Done(item)
		}
		stop()
		// Checked once the informer has stopped: a failure inside the
		// bubble while it runs would leave its goroutines blocked.
		require.Len(t, reconciles, 2)
		for _, sc := range reconciles {
			require.True(t, sc.IsValid(), "the reconcile's ctx carries the dropped trace's decision")
			require.False(t, sc.IsSampled())
		}
		require.Equal(t, map[string]string{"ns/a": "untraced", "ns/b": "untraced"}, r.got, "a sampled-out call is registered as untraced")
		require.Zero(t, handlerctx.Active())
		var names []string
		for _, sp := range rec.Ended() {
			names = append(names, sp.Name())
		}
		require.Empty(t, names, "nothing of a dropped change is recorded, past the handler included")
	})
}
