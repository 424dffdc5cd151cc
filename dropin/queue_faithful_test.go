package dropin_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/handlerctx"
	"github.com/informer-anatomy/informer-anatomy/internal/spantest"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// TestTracedQueueAddAfterReachesInnerAsAddAfter: the same AddAfter calls,
// with delays of zero, less and more, on client-go's rate-limiting and
// delaying queues bare and behind the traced wrappers (tracing on and off):
// client-go counts the same retries for each, and serves the same keys.
// The wrapper used to forward AddAfter(item, d <= 0) as Add, and the
// retries metric missed it.
func TestTracedQueueAddAfterReachesInnerAsAddAfter(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	type delaying = workqueue.TypedDelayingInterface[string]
	limiting := func(m workqueue.MetricsProvider) workqueue.TypedRateLimitingInterface[string] {
		return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "retries", MetricsProvider: m})
	}
	plainDelaying := func(m workqueue.MetricsProvider) delaying {
		return workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: "retries", MetricsProvider: m})
	}
	for name, mk := range map[string]func(m workqueue.MetricsProvider) delaying{
		"client-go rate-limiting": func(m workqueue.MetricsProvider) delaying { return limiting(m) },
		"client-go delaying":      plainDelaying,
		"traced rate-limiting": func(m workqueue.MetricsProvider) delaying {
			q := dropin.NewTracedQueue("retries", limiting(m))
			q.(*dropin.TracedQueue[string]).SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
			return q
		},
		"traced delaying": func(m workqueue.MetricsProvider) delaying {
			q := dropin.NewTracedDelayingQueue("retries", plainDelaying(m))
			q.(*dropin.TracedDelayingQueue[string]).SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
			return q
		},
		"traced rate-limiting, untraced": func(m workqueue.MetricsProvider) delaying {
			q := dropin.NewTracedQueue("retries", limiting(m))
			q.(*dropin.TracedQueue[string]).SetTracerProvider(noop.NewTracerProvider())
			return q
		},
	} {
		t.Run(name, func(t *testing.T) {
			m := &testutil.QueueMetrics{}
			q := mk(m)
			q.AddAfter("ns/a", 0)
			q.AddAfter("ns/b", -time.Second)
			q.AddAfter("ns/c", time.Hour)
			q.AddAfter("ns/a", 0) // merged into the waiting ns/a, still a retry
			require.Equal(t, 4, m.Retries(), "a retry for every AddAfter, as client-go's delaying queue counts")
			require.Equal(t, 2, q.Len(), "delays of zero and less add at once")
			var got []string
			for q.Len() > 0 {
				item, _ := q.Get()
				got = append(got, item)
				q.Done(item)
			}
			require.Equal(t, []string{"ns/a", "ns/b"}, got)
			q.ShutDown()
			q.AddAfter("ns/d", 0)
			require.Equal(t, 4, m.Retries(), "none after the shutdown")
		})
	}
	adds := spantest.Spans(rec.Ended()).Named(tracing.SpanWorkqueueAdd)
	require.Len(t, adds, 8, "the traced runs' four AddAfter calls each (none after the shutdown)")
	require.Len(t, spantest.Spans(rec.Ended()).Named(tracing.SpanWorkqueueDelayed), 2, "only the hour's delay waits")
	var coalesced []bool
	for _, a := range adds {
		coalesced = append(coalesced, spantest.Attr(a, tracing.KeyWorkqueueCoalesced).AsBool())
	}
	require.Equal(t, []bool{false, false, false, true, false, false, false, true}, coalesced, "a delay of zero is an immediate add: merged while the key waits")
}

// hookedQueue is client-go's rate-limiting queue running hook before every
// call made to it.
type hookedQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	hook func()
}

func (h hookedQueue) Add(item string) { h.hook(); h.TypedRateLimitingInterface.Add(item) }
func (h hookedQueue) AddAfter(item string, d time.Duration) {
	h.hook()
	h.TypedRateLimitingInterface.AddAfter(item, d)
}
func (h hookedQueue) AddRateLimited(item string) {
	h.hook()
	h.TypedRateLimitingInterface.AddRateLimited(item)
}
func (h hookedQueue) Done(item string) { h.hook(); h.TypedRateLimitingInterface.Done(item) }
func (h hookedQueue) Len() int         { h.hook(); return h.TypedRateLimitingInterface.Len() }
func (h hookedQueue) NumRequeues(item string) int {
	h.hook()
	return h.TypedRateLimitingInterface.NumRequeues(item)
}
func (h hookedQueue) ShuttingDown() bool {
	h.hook()
	return h.TypedRateLimitingInterface.ShuttingDown()
}
func (h hookedQueue) ShutDown() { h.hook(); h.TypedRateLimitingInterface.ShutDown() }

// endHook is a span processor running hook at every span's end.
type endHook struct {
	sdktrace.SpanProcessor
	hook func()
}

func (e endHook) OnEnd(s sdktrace.ReadOnlySpan) { e.hook(); e.SpanProcessor.OnEnd(s) }

// TestTracedQueueCallsInnerAndEndsSpansOutsideItsLock: every call the
// wrapper makes to inner, and every span it ends (so every span
// processor's OnEnd, which may export synchronously), runs with the
// wrapper's lock free: from each, another goroutine reads the queue's Stats,
// which takes that lock. The wrapper used to hold its lock over both, and
// such a reader waited for the call to finish, which waited for the reader:
// the probe's guard ends the wait and the test fails.
func TestTracedQueueCallsInnerAndEndsSpansOutsideItsLock(t *testing.T) {
	var q workqueue.TypedRateLimitingInterface[string]
	var probes, blocked atomic.Int64
	var probing atomic.Bool
	probe := func() {
		// Not while making the queue, nor from the probe's own Stats (it
		// calls inner's Len), nor again after one failed.
		if q == nil || blocked.Load() > 0 || !probing.CompareAndSwap(false, true) {
			return
		}
		defer probing.Store(false)
		probes.Add(1)
		done := make(chan struct{})
		go func() { defer close(done); q.(*dropin.TracedQueue[string]).Stats() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second): // a deadlock guard, not a timing assertion
			blocked.Add(1)
		}
	}
	rec := tracetest.NewSpanRecorder()
	tq := dropin.NewTracedQueue("lock", hookedQueue{newClientGoQueue(), probe})
	tq.(*dropin.TracedQueue[string]).SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(endHook{rec, probe})))
	q = tq

	q.Add("ns/a")
	q.Add("ns/a") // merged
	item, _ := q.Get()
	q.Add("ns/a") // re-added while processing
	q.Done(item)
	item, _ = q.Get()
	q.AddRateLimited(item)
	q.Done(item)
	q.AddAfter("ns/b", time.Hour)
	q.AddAfter("ns/b", 0)
	item, _ = q.Get()
	q.Done(item)
	q.ShutDown() // ends ns/b's delayed span and ns/a's rate-limited one

	require.Zero(t, blocked.Load(), "a reader of the queue waited on a call to inner or a span's end")
	require.Greater(t, probes.Load(), int64(20), "the probes ran")
	require.Len(t, rec.Ended(), len(rec.Started()), "every span ended")
}

// TestTracedPlainAndDelayingQueuesMatchClientGo: client-go's plain and
// delaying queues, bare and behind NewTracedPlainQueue and
// NewTracedDelayingQueue, given the same 1,500 random calls (fixed seed):
// the same keys from Get in the same order and the same Len after every
// call; every span ended, every add accounted for once, every process
// under its own key's queued span; no workqueue.requeues, which these
// queues do not count.
func TestTracedPlainAndDelayingQueuesMatchClientGo(t *testing.T) {
	for _, delaying := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "delaying"}[delaying], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := tracetest.NewSpanRecorder()
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
				var bare, traced workqueue.TypedInterface[string]
				if delaying {
					bare = workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: "bare"})
					q := dropin.NewTracedDelayingQueue("traced", workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: "traced"}))
					q.(*dropin.TracedDelayingQueue[string]).SetTracerProvider(tp)
					traced = q
				} else {
					bare = workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "bare"})
					q := dropin.NewTracedPlainQueue("traced", workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "traced"}))
					q.(*dropin.TracedPlainQueue[string]).SetTracerProvider(tp)
					traced = q
				}
				_, isDelaying := traced.(workqueue.TypedDelayingInterface[string])
				require.Equal(t, delaying, isDelaying, "the plain wrapper is not a delaying queue")
				queues := []workqueue.TypedInterface[string]{bare, traced}
				r := rand.New(rand.NewPCG(3, 4))
				keys := []string{"ns/a", "ns/b", "ns/c"}
				var processing []string
				for step := range 1500 {
					desc := fmt.Sprintf("step %d", step)
					key := keys[r.IntN(len(keys))]
					switch op := r.IntN(6); {
					case op == 0 || (op == 1 && !delaying):
						for _, q := range queues {
							q.Add(key)
						}
					case op == 1:
						d := time.Duration(r.IntN(40)-10) * time.Millisecond
						for _, q := range queues {
							q.(workqueue.TypedDelayingInterface[string]).AddAfter(key, d)
						}
					case op <= 3:
						if bare.Len() == 0 {
							continue
						}
						a, _ := bare.Get()
						b, _ := traced.Get()
						require.Equal(t, a, b, "%s: Get", desc)
						processing = append(processing, a)
					case op == 4 && len(processing) > 0:
						i := r.IntN(len(processing))
						for _, q := range queues {
							q.Done(processing[i])
						}
						processing = slices.Delete(processing, i, i+1)
					default:
						time.Sleep(time.Duration(r.IntN(30)) * time.Millisecond)
					}
					synctest.Wait()
					require.Equal(t, bare.Len(), traced.Len(), "%s: Len", desc)
				}
				for _, item := range processing {
					for _, q := range queues {
						q.Done(item)
					}
				}
				time.Sleep(time.Hour)
				synctest.Wait()
				for bare.Len() > 0 {
					a, _ := bare.Get()
					b, _ := traced.Get()
					require.Equal(t, a, b, "drain")
					bare.Done(a)
					traced.Done(b)
				}
				require.Zero(t, traced.Len())
				for _, q := range queues {
					q.ShutDown()
				}
				all := spantest.Spans(rec.Ended())
				require.Len(t, all, len(rec.Started()), "every span ended")
				require.NotEmpty(t, all.Named(tracing.SpanWorkqueueProcess))
				for _, p := range all.Named(tracing.SpanWorkqueueProcess) {
					require.Equal(t, attribute.EMPTY, spantest.Attr(p, tracing.KeyWorkqueueRequeues).Type(), "no requeues counted")
				}
				if delaying {
					require.NotEmpty(t, all.Named(tracing.SpanWorkqueueDelayed))
				} else {
					require.Empty(t, all.Named(tracing.SpanWorkqueueDelayed))
				}
				spantest.CheckWorkqueueAccounting(t, all, true)
			})
		})
	}
}

// TestTracedQueuesConcurrentWithAReentrantProcessor: each of the three
// client-go wrappers under producers and workers on their own goroutines
// (under -race), with a span processor that reads the queue's Stats at
// every span's end, as a live view fed by its exporter might: nothing
// deadlocks (spans end outside the wrapper's lock), every Get is matched
// by a process span that ends, every add is counted, nothing is left
// registered or open.
func TestTracedQueuesConcurrentWithAReentrantProcessor(t *testing.T) {
	type statser interface{ Stats() dropin.QueueStats }
	for _, kind := range []string{"plain", "delaying", "rate-limiting"} {
		t.Run(kind, func(t *testing.T) {
			var q workqueue.TypedInterface[string]
			var reads atomic.Int64
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(endHook{rec, func() {
				q.(statser).Stats()
				reads.Add(1)
			}}))
			switch kind {
			case "plain":
				tq := dropin.NewTracedPlainQueue("c", workqueue.NewTyped[string]())
				tq.(*dropin.TracedPlainQueue[string]).SetTracerProvider(tp)
				q = tq
			case "delaying":
				tq := dropin.NewTracedDelayingQueue("c", workqueue.NewTypedDelayingQueue[string]())
				tq.(*dropin.TracedDelayingQueue[string]).SetTracerProvider(tp)
				q = tq
			default:
				tq := dropin.NewTracedQueue("c", newClientGoQueue())
				tq.(*dropin.TracedQueue[string]).SetTracerProvider(tp)
				q = tq
			}
			runConcurrently(t, rec, q, q.(statser).Stats, concurrentRun{
				producers: 3, workers: 3, addsEach: 300, keys: 15, seed: 11, retryEvery: 5,
				retry: func(item string) {
					switch q := q.(type) {
					case workqueue.TypedRateLimitingInterface[string]:
						q.AddRateLimited(item)
					case workqueue.TypedDelayingInterface[string]:
						q.AddAfter(item, time.Millisecond)
					default:
						q.Add(item)
					}
				},
			})
			require.EqualValues(t, len(rec.Ended()), reads.Load(), "the processor read the queue at every end")
			require.Zero(t, handlerctx.Active(), "every registration ended")
		})
	}
}
