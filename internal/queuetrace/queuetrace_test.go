package queuetrace

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/internal/handlerctx"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// probedQueue is client-go's rate-limiting queue calling probe before
// every call made to it.
type probedQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	probe func(call string)
}

func (p probedQueue) Len() int { p.probe("Len"); return p.TypedRateLimitingInterface.Len() }
func (p probedQueue) ShuttingDown() bool {
	p.probe("ShuttingDown")
	return p.TypedRateLimitingInterface.ShuttingDown()
}

type probedProcessor struct {
	sdktrace.SpanProcessor
	probe func(call string)
}

func (p probedProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	p.probe("End " + s.Name())
	p.SpanProcessor.OnEnd(s)
}

// TestTracerHoldsNoLockOverInnerOrEnd: on one goroutine, with both
// semantics, every call to inner (the Tracer's own reads of Len and
// ShuttingDown, the forwarded calls, NumRequeues) and every span's end
// find mu free: Tracer's doc says what mu guards and that it is never held
// over these.
func TestTracerHoldsNoLockOverInnerOrEnd(t *testing.T) {
	for _, sem := range []Semantics{ClientGo, PriorityQueue} {
		var tr *Tracer[string]
		var held []string
		probes := 0
		probe := func(call string) {
			if tr == nil {
				return
			}
			probes++
			if !tr.mu.TryLock() {
				held = append(held, call)
				return
			}
			tr.mu.Unlock()
		}
		inner := probedQueue{workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()), probe}
		rec := tracetest.NewSpanRecorder()
		tr = New(Config[string]{Name: "probe", TracerName: "probe", Inner: inner, Semantics: sem,
			NumRequeues: func(item string) int { probe("NumRequeues"); return inner.NumRequeues(item) }})
		tr.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(probedProcessor{rec, probe})))
		add := func(item string) { tr.Add(item, func() { probe("Add"); inner.Add(item) }) }
		after := func(item string, d time.Duration) {
			tr.AddDelayed(item, d, false, func() { probe("AddAfter"); inner.AddAfter(item, d) })
		}
		limited := func(item string) {
			tr.AddDelayed(item, 0, true, func() { probe("AddRateLimited"); inner.AddRateLimited(item) })
		}
		get := func() string {
			item, shutdown := inner.Get()
			tr.Got(item, shutdown)
			return item
		}
		done := func(item string) { tr.Done(item, func() { probe("Done"); inner.Done(item) }) }

		add("ns/a")
		add("ns/a")
		after("ns/a", time.Millisecond) // fires while ns/a waits (merged)
		time.Sleep(10 * time.Millisecond)
		item := get()
		add(item)
		limited(item)
		done(item)
		item = get() // the re-add; the rate-limited entry fires into the wait or at a later Get
		done(item)
		after("ns/b", time.Hour)
		add("ns/b") // PriorityQueue: makes the entry fire now
		item = get()
		done(item)
		_ = tr.Stats()
		tr.ShutDown(func() { probe("ShutDown"); inner.ShutDown() })

		require.Empty(t, held, "semantics %d: mu was held over these", sem)
		require.Greater(t, probes, 30, "semantics %d: the probes ran", sem)
		require.Len(t, rec.Ended(), len(rec.Started()), "semantics %d: every span ended", sem)
	}
}

// TestUntracedCallsAddWithoutSpans: an add made in a call registered as
// untraced (a handler call whose object the informer's TraceFilter left
// out) makes no span, immediate or delayed, and neither does the process
// of what only such adds made, nor the re-add made in that process; the
// wait's bookkeeping goes on (merges, Stats). A traced add merged into an
// untraced wait gives the process a root of its own linked to it (there
// is no queued span to hang it under); an untraced add merged into a
// traced wait is no link.
func TestUntracedCallsAddWithoutSpans(t *testing.T) {
	for _, sem := range []Semantics{ClientGo, PriorityQueue} {
		synctest.Test(t, func(t *testing.T) {
			inner := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
			rec := tracetest.NewSpanRecorder()
			tr := New(Config[string]{Name: "q", TracerName: "q", Inner: inner, Semantics: sem, NumRequeues: inner.NumRequeues})
			tr.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
			add := func(item string) { tr.Add(item, func() { inner.Add(item) }) }
			after := func(item string, d time.Duration) {
				tr.AddDelayed(item, d, false, func() { inner.AddAfter(item, d) })
			}
			limited := func(item string) {
				tr.AddDelayed(item, 0, true, func() { inner.AddRateLimited(item) })
			}
			get := func() string {
				item, shutdown := inner.Get()
				tr.Got(item, shutdown)
				return item
			}
			done := func(item string) { tr.Done(item, func() { inner.Done(item) }) }
			untraced := func(f func()) {
				exit := handlerctx.Enter(trace.SpanContext{})
				defer exit()
				f()
			}

			untraced(func() {
				add("ns/b")
				add("ns/b") // merged
				after("ns/c", time.Millisecond)
			})
			time.Sleep(time.Millisecond)
			synctest.Wait()
			for range 2 {
				item := get()
				if item == "ns/b" {
					limited(item) // in an untraced process
				}
				done(item)
			}
			time.Sleep(time.Second)
			synctest.Wait()
			done(get()) // ns/b again
			require.Empty(t, rec.Ended(), "semantics %d: no span for untraced calls", sem)
			st := tr.Stats()
			require.Equal(t, uint64(4), st.Adds, "semantics %d", sem)
			require.Equal(t, uint64(1), st.Merged, "semantics %d", sem)
			require.Equal(t, uint64(3), st.Processed, "semantics %d", sem)

			untraced(func() { add("ns/d") })
			add("ns/d") // traced, merged into the untraced wait
			done(get())
			add("ns/e")
			untraced(func() { add("ns/e") })
			done(get())
			require.Zero(t, handlerctx.Active(), "semantics %d", sem)

			var adds, queued []sdktrace.ReadOnlySpan
			process := map[string]sdktrace.ReadOnlySpan{}
			for _, s := range rec.Ended() {
				key := ""
				for _, a := range s.Attributes() {
					if a.Key == tracing.KeyWorkqueueKey {
						key = a.Value.AsString()
					}
				}
				switch s.Name() {
				case tracing.SpanWorkqueueAdd:
					adds = append(adds, s)
				case tracing.SpanWorkqueueQueued:
					queued = append(queued, s)
				case tracing.SpanWorkqueueProcess:
					process[key] = s
				}
			}
			require.Len(t, adds, 2, "semantics %d: the two traced adds", sem)
			require.Len(t, queued, 1, "semantics %d: ns/e's wait, made by its traced add", sem)
			require.Len(t, process, 2, "semantics %d", sem)
			d := process["ns/d"]
			require.False(t, d.Parent().IsValid(), "semantics %d: ns/d's process is a root", sem)
			require.Len(t, d.Links(), 1, "semantics %d", sem)
			require.Equal(t, adds[0].SpanContext(), d.Links()[0].SpanContext, "semantics %d: linked to the traced add", sem)
			e := process["ns/e"]
			require.Equal(t, queued[0].SpanContext().SpanID(), e.Parent().SpanID(), "semantics %d", sem)
			require.Empty(t, e.Links(), "semantics %d: the untraced add is no link", sem)
			tr.ShutDown(inner.ShutDown)
		})
	}
}

// TestCountsStartWhenSomethingReads: untraced and with no live view, the Tracer keeps no books (the untraced queue costs what
// client-go's does); the first Stats call starts them, and from then on
// adds, merges, retries and reconciles count with tracing off. Before
// issue 25's change they never counted untraced.
func TestCountsStartWhenSomethingReads(t *testing.T) {
	inner := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	defer inner.ShutDown()
	watched := false
	tr := New(Config[string]{Name: "counts", TracerName: "counts", Inner: inner, Watched: func() bool { return watched }})
	tr.SetTracerProvider(noop.NewTracerProvider())
	add := func(item string) { tr.Add(item, func() { inner.Add(item) }) }
	cycle := func() {
		item, shutdown := inner.Get()
		tr.Got(item, shutdown)
		tr.Done(item, func() { inner.Done(item) })
	}
	add("a")
	add("a")
	cycle()
	require.False(t, tr.keep.Load(), "nothing reads: no books")
	require.Empty(t, tr.pending)

	watched = true // the live view's handler is made
	add("b")
	add("b")
	tr.RateLimited()
	cycle()
	st := tr.Stats()
	require.Equal(t, uint64(2), st.Adds)
	require.Equal(t, uint64(1), st.Merged)
	require.Equal(t, uint64(1), st.Processed)
	require.Equal(t, uint64(1), st.Retries)
	require.Zero(t, st.Processing)
}
