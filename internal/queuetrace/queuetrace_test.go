package queuetrace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"k8s.io/client-go/util/workqueue"
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
