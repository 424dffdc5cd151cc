package dropin_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/handlerctx"
	"github.com/informer-anatomy/informer-anatomy/internal/spantest"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

func newClientGoQueue() workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "oracle"})
}

// startTracedPipeline starts, in the calling synctest bubble, what a
// controller builds: a dropin informer on srv's pods whose handler adds each
// pod's key to a traced client-go queue, both traced by tp. configure (nil:
// nothing) sets the informer up before it runs; onAdd (nil: nothing) sees
// each added pod before its key is queued. It returns once the informer has
// delivered what it listed; stop cancels the informer and waits for it. The
// queue shuts down when the test ends.
func startTracedPipeline(t *testing.T, srv *apiserver.Server, tp trace.TracerProvider, configure func(*dropin.Informer), onAdd func(obj any)) (q workqueue.TypedRateLimitingInterface[string], stop func()) {
	t.Helper()
	inf := dropin.NewSharedIndexInformer(inProcessLW(srv), &corev1.Pod{}, 0, nil).(*dropin.Informer)
	require.NoError(t, inf.SetTracerProvider(tp))
	if configure != nil {
		configure(inf)
	}
	q = dropin.NewTracedQueue("pods", newClientGoQueue())
	q.(*dropin.TracedQueue[string]).SetTracerProvider(tp)
	t.Cleanup(q.ShutDown)
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if onAdd != nil {
			onAdd(obj)
		}
		key, _ := cache.MetaNamespaceKeyFunc(obj)
		q.Add(key)
	}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	synctest.Wait()
	return q, func() { cancel(); <-done }
}

// tracedQueue returns a traced queue over client-go's, recording into rec
// (nil: tracing off, with a no-op provider).
func tracedQueue(rec *tracetest.SpanRecorder) workqueue.TypedRateLimitingInterface[string] {
	return traceQueue(rec, newClientGoQueue())
}

func traceQueue(rec *tracetest.SpanRecorder, inner workqueue.TypedRateLimitingInterface[string]) workqueue.TypedRateLimitingInterface[string] {
	return traceWith(rec, dropin.NewTracedQueue("test", inner))
}

// tracedQueueOn returns a traced queue named name over client-go's default
// rate-limiting queue of T, tracing on tp, shut down when the test ends.
func tracedQueueOn[T comparable](t *testing.T, name string, tp trace.TracerProvider) workqueue.TypedRateLimitingInterface[T] {
	t.Helper()
	q := dropin.NewTracedQueue(name, workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[T]()))
	q.(*dropin.TracedQueue[T]).SetTracerProvider(tp)
	t.Cleanup(q.ShutDown)
	return q
}

// traceWith points q, a traced queue, at rec (nil: a no-op provider).
func traceWith(rec *tracetest.SpanRecorder, q workqueue.TypedRateLimitingInterface[string]) workqueue.TypedRateLimitingInterface[string] {
	if rec != nil {
		q.(*dropin.TracedQueue[string]).SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	} else {
		q.(*dropin.TracedQueue[string]).SetTracerProvider(noop.NewTracerProvider())
	}
	return q
}

// oracleOps says which operations a run draws from, and how the traced
// queues are built.
type oracleOps struct {
	// rateLimited: AddRateLimited too. Its delay is the limiter's, which
	// the traced queue knows only if it knows the limiter (see blind).
	rateLimited bool
	// withConfig: the traced queues are NewTracedRateLimitingQueueWithConfig's,
	// else NewTracedQueue over client-go's queue.
	withConfig bool
	// blind: NewTracedQueue reads no limiter out of client-go's queue
	// (SkipRateLimiterOf), as after a client-go upgrade that renamed the
	// field. Then only NewTracedRateLimitingQueueWithConfig knows the
	// limiter; behind NewTracedQueue a rate-limited add's verdicts are
	// approximations (TracedQueue's doc), and such a run is not compared
	// with client-go's metrics, only for Get order, Len and NumRequeues
	// and for every span ended and accounted for.
	blind bool
}

// runQueueOracle drives client-go's queue and two traced ones (recording
// and not) with the same operations, read from next, and requires the
// same answers from all three: Get order, Len, NumRequeues, and so the
// same coalescing. Unless rate-limited adds come with an unknown limiter,
// it also requires, call by call, the recording queue's spans to agree
// with what client-go's queue under it reports through its metrics.
func runQueueOracle(t *testing.T, steps int, ops oracleOps, next func(n int) int) {
	if ops.blind {
		dropin.SkipRateLimiterOf(t)
	}
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		metrics := &testutil.QueueMetrics{}
		build := func(rec *tracetest.SpanRecorder, config workqueue.TypedRateLimitingQueueConfig[string]) workqueue.TypedRateLimitingInterface[string] {
			if ops.withConfig {
				return traceWith(rec, dropin.NewTracedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](), config))
			}
			return traceQueue(rec, workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](), config))
		}
		traced := build(rec, workqueue.TypedRateLimitingQueueConfig[string]{Name: "traced", MetricsProvider: metrics})
		queues := []workqueue.TypedRateLimitingInterface[string]{newClientGoQueue(), traced,
			build(nil, workqueue.TypedRateLimitingQueueConfig[string]{Name: "oracle"})}
		defer func() {
			for _, q := range queues {
				q.ShutDown()
			}
		}()
		strict := !ops.rateLimited || ops.withConfig || !ops.blind
		// compare checks the spans the last call on traced ended against
		// client-go's metrics.
		compare := func(desc string, delayed bool, call func()) {
			adds, latency, work := metrics.Read()
			ended := len(rec.Ended())
			call()
			if !strict {
				return
			}
			adds2, latency2, work2 := metrics.Read()
			now := spantest.Spans(rec.Ended()[ended:])
			// An immediate add's verdict shows at once in client-go's count;
			// a delayed one's only when its delay is over, as the latency.
			if a := now.Named(tracing.SpanWorkqueueAdd); len(a) == 1 && len(now.Named(tracing.SpanWorkqueueDelayed)) == 0 && !delayed {
				require.Equal(t, adds2 == adds, spantest.Attr(a[0], tracing.KeyWorkqueueCoalesced).AsBool(),
					"%s: merged exactly when client-go counted no add", desc)
			}
			if len(latency2) > len(latency) {
				q := now.Named(tracing.SpanWorkqueueQueued)
				require.Len(t, q, 1, "%s: a queued span for the Get", desc)
				require.Equal(t, latency2[len(latency)], q[0].EndTime().Sub(q[0].StartTime()), "%s: queued lasts as long as client-go says the key waited", desc)
			}
			if len(work2) > len(work) {
				p := now.Named(tracing.SpanWorkqueueProcess)
				require.Len(t, p, 1, "%s: the process span ends at Done", desc)
				require.Equal(t, work2[len(work)], p[0].EndTime().Sub(p[0].StartTime()), "%s: process lasts from Get to Done", desc)
			}
		}
		keys := []string{"ns/a", "ns/b", "ns/c", "ns/d"}
		var processing []string
		for step := range steps {
			op := next(8)
			key := keys[next(len(keys))]
			desc := fmt.Sprintf("step %d: op %d key %s", step, op, key)
			if op == 3 && !ops.rateLimited {
				op = 2
			}
			each := func(f func(q workqueue.TypedRateLimitingInterface[string])) {
				for _, q := range queues {
					if q == traced {
						compare(desc, op == 2 || op == 3, func() { f(q) })
					} else {
						f(q)
					}
				}
			}
			switch op {
			case 0, 1:
				each(func(q workqueue.TypedRateLimitingInterface[string]) { q.Add(key) })
			case 2:
				d := time.Duration(next(50)) * time.Millisecond
				each(func(q workqueue.TypedRateLimitingInterface[string]) { q.AddAfter(key, d) })
			case 3:
				each(func(q workqueue.TypedRateLimitingInterface[string]) { q.AddRateLimited(key) })
			case 4:
				each(func(q workqueue.TypedRateLimitingInterface[string]) { q.Forget(key) })
			case 5, 6:
				if queues[0].Len() == 0 {
					continue
				}
				var got []string
				each(func(q workqueue.TypedRateLimitingInterface[string]) {
					item, shutdown := q.Get()
					require.False(t, shutdown, desc)
					got = append(got, item)
				})
				require.Equal(t, []string{got[0], got[0], got[0]}, got, "%s: Get", desc)
				processing = append(processing, got[0])
			case 7:
				if len(processing) == 0 {
					time.Sleep(time.Duration(next(100)) * time.Millisecond)
					synctest.Wait()
					continue
				}
				i := next(len(processing))
				item := processing[i]
				processing = slices.Delete(processing, i, i+1)
				each(func(q workqueue.TypedRateLimitingInterface[string]) { q.Done(item) })
			}
			synctest.Wait()
			for _, q := range queues[1:] {
				require.Equal(t, queues[0].Len(), q.Len(), "%s: Len", desc)
				for _, k := range keys {
					require.Equal(t, queues[0].NumRequeues(k), q.NumRequeues(k), "%s: NumRequeues(%s)", desc, k)
				}
			}
		}
		// Drain: finish what is processing, wait out every delay, and
		// require the same keys in the same order from all three.
		for _, item := range processing {
			each := queues
			for _, q := range each {
				if q == traced {
					compare("drain: Done", false, func() { q.Done(item) })
				} else {
					q.Done(item)
				}
			}
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		for queues[0].Len() > 0 {
			var got []string
			for _, q := range queues {
				var item string
				if q == traced {
					compare("drain: Get", false, func() { item, _ = q.Get() })
					compare("drain: Done", false, func() { q.Done(item) })
				} else {
					item, _ = q.Get()
					q.Done(item)
				}
				got = append(got, item)
			}
			require.Equal(t, []string{got[0], got[0], got[0]}, got, "drain")
		}
		for _, q := range queues[1:] {
			require.Zero(t, q.Len())
		}
		require.Zero(t, handlerctx.Active(), "every process span's registration was ended by its Done")
		traced.ShutDown()
		require.Len(t, rec.Ended(), len(rec.Started()), "every span ended by the shutdown")
		if strict {
			adds, latency, work := metrics.Read()
			all := spantest.Spans(rec.Ended())
			require.Len(t, all.Named(tracing.SpanWorkqueueQueued), len(latency), "a queued span per Get")
			require.Len(t, all.Named(tracing.SpanWorkqueueProcess), len(work), "a process span per Done")
			require.Equal(t, adds, len(latency), "every add client-go did not merge was served")
		}
		spantest.CheckWorkqueueAccounting(t, spantest.Spans(rec.Ended()), strict)
	})
}

// TestTracedQueueMatchesClientGo: 2,000 random operations (200 under
// -race: testutil.OracleSteps) with a fixed seed, with and without
// rate-limited adds, and with rate-limited adds behind a NewTracedQueue
// that finds no limiter (the guessing fallback).
func TestTracedQueueMatchesClientGo(t *testing.T) {
	for _, ops := range []oracleOps{{}, {rateLimited: true}, {rateLimited: true, blind: true}} {
		t.Run(fmt.Sprintf("rateLimited=%v/blind=%v", ops.rateLimited, ops.blind), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			runQueueOracle(t, testutil.OracleSteps(2000), ops, func(n int) int { return r.IntN(n) })
		})
	}
}

// TestTracedRateLimitingQueueWithConfigMatchesClientGo: the same oracle
// with the traced queues built by NewTracedRateLimitingQueueWithConfig,
// with NewTracedQueue's reflection off: its spans must agree with
// client-go's metrics call by call, rate-limited adds included, which
// they do only if the wrapper was handed the limiter (behind a blind
// NewTracedQueue they do not: TestTracedQueueMatchesClientGo's blind run
// is not strict).
func TestTracedRateLimitingQueueWithConfigMatchesClientGo(t *testing.T) {
	for _, rateLimited := range []bool{false, true} {
		t.Run(fmt.Sprintf("rateLimited=%v", rateLimited), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			runQueueOracle(t, testutil.OracleSteps(2000), oracleOps{rateLimited: rateLimited, withConfig: true, blind: true}, func(n int) int { return r.IntN(n) })
		})
	}
}

// FuzzTracedQueueMatchesClientGo: the same oracle with the operations read
// from the fuzzer's bytes; the first byte chooses whether rate-limited adds
// are among them.
func FuzzTracedQueueMatchesClientGo(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 5, 0, 7, 0, 2, 1, 3, 5, 1, 7, 0})
	f.Add([]byte{1, 3, 1, 3, 1, 5, 1, 7, 0, 2, 2, 40, 7, 0, 5, 2, 7, 0})
	f.Add([]byte{0, 2, 0, 30, 2, 0, 10, 7, 0, 60, 0, 0, 5, 0, 7, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) == 0 {
			return
		}
		rateLimited := ops[0]%2 == 1
		ops = ops[1:]
		i := 0
		next := func(n int) int {
			if i >= len(ops) {
				return 0
			}
			i++
			return int(ops[i-1]) % n
		}
		runQueueOracle(t, len(ops)/2, oracleOps{rateLimited: rateLimited}, next)
	})
}

// TestTracedQueueSpans: the chain add → queued → process, a merged add
// linked from the process that served it, a delay as its own span, and a
// re-add during processing under that process.
func TestTracedQueueSpans(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		q := tracedQueue(rec)
		defer q.ShutDown()

		q.Add("ns/a")
		time.Sleep(time.Second)
		q.Add("ns/a") // merged: ns/a is still waiting
		time.Sleep(time.Second)
		item, _ := q.Get()
		require.Equal(t, "ns/a", item)
		q.Add("ns/a") // re-added during processing, from the worker
		time.Sleep(3 * time.Second)
		q.Done(item)

		all := spantest.Spans(rec.Ended())
		adds := all.Named(tracing.SpanWorkqueueAdd)
		require.Len(t, adds, 3)
		require.False(t, spantest.Attr(adds[0], tracing.KeyWorkqueueCoalesced).AsBool())
		require.True(t, spantest.Attr(adds[1], tracing.KeyWorkqueueCoalesced).AsBool(), "the second Add was merged")
		require.Equal(t, "ns/a", spantest.Attr(adds[0], tracing.KeyWorkqueueKey).AsString())
		require.Equal(t, "ns/a", spantest.Attr(adds[0], tracing.KeyObjectKey).AsString())
		require.Equal(t, "test", spantest.Attr(adds[0], tracing.KeyWorkqueueName).AsString())
		require.EqualValues(t, 1, spantest.Attr(adds[1], tracing.KeyWorkqueueDepth).AsInt64(), "Len when the merged add came")

		process := all.Named(tracing.SpanWorkqueueProcess)
		require.Len(t, process, 1)
		p := process[0]
		require.Equal(t, trace.SpanKindConsumer, p.SpanKind())
		require.Equal(t, 3*time.Second, p.EndTime().Sub(p.StartTime()), "Get to Done")
		queued := all.ParentOf(p)
		require.NotNil(t, queued)
		require.Equal(t, tracing.SpanWorkqueueQueued, queued.Name())
		require.Equal(t, 2*time.Second, queued.EndTime().Sub(queued.StartTime()), "from the first Add to Get")
		require.Equal(t, adds[0].SpanContext().SpanID(), queued.Parent().SpanID())
		require.Len(t, p.Links(), 1)
		require.Equal(t, adds[1].SpanContext(), p.Links()[0].SpanContext, "the process links to the add it absorbed")
		require.Equal(t, p.SpanContext().SpanID(), adds[2].Parent().SpanID(), "a re-add during processing is the process's child")
		require.False(t, spantest.Attr(adds[2], tracing.KeyWorkqueueCoalesced).AsBool())
		require.Zero(t, handlerctx.Active())

		// The re-added key comes out again, its queued span from the re-add.
		item, _ = q.Get()
		q.Done(item)
		all = spantest.Spans(rec.Ended())
		process = all.Named(tracing.SpanWorkqueueProcess)
		require.Len(t, process, 2)
		require.Equal(t, adds[2].SpanContext().SpanID(), all.ParentOf(process[1]).Parent().SpanID())
		require.EqualValues(t, 0, spantest.Attr(process[1], tracing.KeyWorkqueueRequeues).AsInt64())

		st := q.(*dropin.TracedQueue[string]).Stats()
		require.Equal(t, dropin.QueueStats{Adds: 3, Processed: 2, Merged: 1, ProcessTotal: 3 * time.Second}, st)
	})
}

// TestTracedQueueDelays: AddAfter's wait is a delayed span ending at the
// ready time, then queued; a rate-limited requeue is a delayed span under
// the process that asked for it, and the next process says how many
// requeues the key has had.
func TestTracedQueueDelays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		q := tracedQueue(rec)
		defer q.ShutDown()

		q.AddAfter("ns/b", 10*time.Second)
		time.Sleep(15 * time.Second)
		synctest.Wait()
		item, _ := q.Get()
		q.AddRateLimited(item) // a failed reconcile asks for a retry
		q.Done(item)
		item, _ = q.Get() // blocks until the limiter's 5 ms are over
		q.Done(item)
		// With a MeterProvider set (an earlier test in this process may set
		// one), the queue's metrics loop fires the retry's entry at its time
		// as inner's goroutine does, and ends its workqueue.delayed span just
		// after: Get may return first. Wait for that goroutine too.
		synctest.Wait()

		all := spantest.Spans(rec.Ended())
		delayed := all.Named(tracing.SpanWorkqueueDelayed)
		require.Len(t, delayed, 2)
		require.Equal(t, 10*time.Second, delayed[0].EndTime().Sub(delayed[0].StartTime()), "AddAfter's delay")
		process := all.Named(tracing.SpanWorkqueueProcess)
		require.Len(t, process, 2)
		queued := all.ParentOf(process[0])
		require.Equal(t, 5*time.Second, queued.EndTime().Sub(queued.StartTime()), "ready at 10 s, taken at 15 s")
		require.Equal(t, delayed[0].SpanContext().SpanID(), queued.Parent().SpanID())

		add := all.ParentOf(delayed[1])
		require.Equal(t, tracing.SpanWorkqueueAdd, add.Name())
		require.Equal(t, process[0].SpanContext().SpanID(), add.Parent().SpanID(), "the retry's add is the failed process's child")
		require.Equal(t, delayed[1].SpanContext().SpanID(), all.ParentOf(process[1]).Parent().SpanID())
		require.EqualValues(t, 1, spantest.Attr(process[1], tracing.KeyWorkqueueRequeues).AsInt64())
	})
}

// TestTracedQueueUntracedMakesNoSpans: with a no-op provider nothing is
// registered or recorded, and the queue still counts (issue 25: a queue's
// counts exist with tracing off; before, Stats stayed zero untraced).
func TestTracedQueueUntracedMakesNoSpans(t *testing.T) {
	q := tracedQueue(nil)
	defer q.ShutDown()
	q.(*dropin.TracedQueue[string]).Stats() // a Stats caller: count from here
	q.Add("ns/a")
	q.Add("ns/a")
	q.AddRateLimited("ns/b")
	item, _ := q.Get()
	require.Zero(t, handlerctx.Active())
	st := q.(*dropin.TracedQueue[string]).Stats()
	require.Equal(t, 1, st.Processing, "in flight")
	q.Done(item)
	st = q.(*dropin.TracedQueue[string]).Stats()
	require.Equal(t, uint64(3), st.Adds, "every add")
	require.Equal(t, uint64(1), st.Merged, "the second add of ns/a")
	require.Equal(t, uint64(1), st.Processed)
	require.Equal(t, uint64(1), st.Retries, "the AddRateLimited")
	require.Zero(t, st.Processing)
}

// TestAddFromATracedHandlerIsItsChild: the whole chain, from the informer's
// handler call to the reconcile, in one trace: a dropin informer's handler
// adds the object's key to a traced queue, and a worker processes it.
func TestAddFromATracedHandlerIsItsChild(t *testing.T) {
	s := newServer(t, "a")
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		q, stop := startTracedPipeline(t, s.srv, sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), nil, nil)
		item, _ := q.Get()
		q.Done(item)
		stop()

		all := spantest.Spans(rec.Ended())
		process := all.Named(tracing.SpanWorkqueueProcess)
		require.Len(t, process, 1)
		var chain []string
		for s := sdktrace.ReadOnlySpan(process[0]); s != nil; s = all.ParentOf(s) {
			chain = append(chain, s.Name())
			require.Equal(t, process[0].SpanContext().TraceID(), s.SpanContext().TraceID(), "%s is in the object's trace", s.Name())
		}
		slices.Reverse(chain)
		require.Equal(t, []string{"ListAndWatch watchlist", "HandleDeltas", "distribute", "addCh", "pop", "nextCh", "OnAdd",
			"workqueue.add", "workqueue.queued", "workqueue.process"}, chain)
		// The handler is startTracedPipeline's closure: named for the
		// function that wrote it, not for this test.
		require.Equal(t, "github.com/informer-anatomy/informer-anatomy/dropin_test.startTracedPipeline#0",
			spantest.Attr(all.Named("OnAdd")[0], tracing.KeyListener).AsString(), "the listener is named for the user's handler")
	})
}

// TestTracedQueueDelayedAddsMergeAsTheDelayingQueueDoes: client-go keeps
// one waiting entry per key; a second AddAfter moves it earlier and is
// merged, and an Add after the entry fired is merged into that wait. The
// one process links both merged adds.
func TestTracedQueueDelayedAddsMergeAsTheDelayingQueueDoes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		q := tracedQueue(rec)
		defer q.ShutDown()

		start := time.Now()
		q.AddAfter("ns/a", 5*time.Second)
		q.AddAfter("ns/a", 2*time.Second) // merged into the entry, now ready at 2 s
		time.Sleep(3 * time.Second)
		synctest.Wait()
		q.Add("ns/a") // merged: the entry fired at 2 s
		item, _ := q.Get()
		q.Done(item)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		require.Zero(t, q.Len(), "nothing fires at 5 s: the entry was moved, not doubled")

		all := spantest.Spans(rec.Ended())
		require.Len(t, all, len(rec.Started()), "every span ended")
		adds := all.Named(tracing.SpanWorkqueueAdd)
		require.Len(t, adds, 3)
		require.Equal(t, []bool{false, true, true}, []bool{spantest.Attr(adds[0], tracing.KeyWorkqueueCoalesced).AsBool(),
			spantest.Attr(adds[1], tracing.KeyWorkqueueCoalesced).AsBool(), spantest.Attr(adds[2], tracing.KeyWorkqueueCoalesced).AsBool()})
		delayed := all.Named(tracing.SpanWorkqueueDelayed)
		require.Len(t, delayed, 1, "a merged delayed add has no wait of its own")
		require.Equal(t, adds[0].SpanContext().SpanID(), delayed[0].Parent().SpanID())
		require.Equal(t, start.Add(2*time.Second), delayed[0].EndTime(), "the entry was ready at 2 s")
		process := all.Named(tracing.SpanWorkqueueProcess)
		require.Len(t, process, 1)
		queued := all.ParentOf(process[0])
		require.Equal(t, delayed[0].SpanContext().SpanID(), queued.Parent().SpanID())
		require.Equal(t, time.Second, queued.EndTime().Sub(queued.StartTime()), "waiting from 2 s to the Get at 3 s")
		var linked []trace.SpanID
		for _, l := range process[0].Links() {
			linked = append(linked, l.SpanContext.SpanID())
		}
		require.Equal(t, []trace.SpanID{adds[1].SpanContext().SpanID(), adds[2].SpanContext().SpanID()}, linked,
			"the process links every add it absorbed")
		for _, s := range all {
			require.NotEqual(t, adds[1].SpanContext().SpanID(), s.Parent().SpanID(), "a merged add ends its trace")
			require.NotEqual(t, adds[2].SpanContext().SpanID(), s.Parent().SpanID(), "a merged add ends its trace")
		}
	})
}

// TestTracedQueueShutDownEndsDelayedSpans: the delaying queue drops its
// waiting entries at shutdown; their spans end there instead of never.
func TestTracedQueueShutDownEndsDelayedSpans(t *testing.T) {
	for _, shutdown := range []func(workqueue.TypedRateLimitingInterface[string]){
		workqueue.TypedRateLimitingInterface[string].ShutDown,
		workqueue.TypedRateLimitingInterface[string].ShutDownWithDrain,
	} {
		synctest.Test(t, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			q := tracedQueue(rec)
			q.AddAfter("ns/a", time.Hour)
			q.AddRateLimited("ns/b")
			time.Sleep(time.Second)
			shutdown(q)
			// client-go's ShutDownWithDrain leaves the delaying queue's
			// goroutine running (its entries then fire into a queue that
			// drops them); ShutDown stops it before the bubble ends.
			defer q.ShutDown()
			require.Len(t, rec.Ended(), len(rec.Started()))
			delayed := spantest.Spans(rec.Ended()).Named(tracing.SpanWorkqueueDelayed)
			require.Len(t, delayed, 2)
			// The AddAfter's entry never fired: it ends at the shutdown.
			// The AddRateLimited's fired at the rate limiter's first delay
			// (5ms), which the wrapper asks client-go's limiter for.
			var took []time.Duration
			for _, d := range delayed {
				took = append(took, d.EndTime().Sub(d.StartTime()))
			}
			require.ElementsMatch(t, []time.Duration{time.Second, 5 * time.Millisecond}, took)
		})
	}
}

// TestTracedQueueObjectKey: informer.object.key is set for a key that
// reads as a store key, a string or a Stringer such as cache.ObjectName,
// and not for other keys.
func TestTracedQueueObjectKey(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	strs := tracedQueueOn[string](t, "strings", tp)
	names := tracedQueueOn[cache.ObjectName](t, "names", tp)
	type pair struct{ A, B int }
	pairs := tracedQueueOn[pair](t, "pairs", tp)

	for _, k := range []string{"ns/a", "node-1", "Pod/ns/a", "/a", "ns/", ""} {
		strs.Add(k)
	}
	names.Add(cache.NewObjectName("ns", "b"))
	names.Add(cache.NewObjectName("", "c"))
	pairs.Add(pair{1, 2})

	got := map[string]string{}
	for _, s := range spantest.Spans(rec.Ended()).Named(tracing.SpanWorkqueueAdd) {
		got[spantest.Attr(s, tracing.KeyWorkqueueKey).AsString()] = spantest.Attr(s, tracing.KeyObjectKey).AsString()
	}
	require.Equal(t, map[string]string{
		"ns/a": "ns/a", "node-1": "node-1", "Pod/ns/a": "", "/a": "", "ns/": "", "": "",
		"ns/b": "ns/b", "c": "c", "{A:1 B:2}": "",
	}, got)
}

// TestTracedQueueConcurrent: producers and workers on their own goroutines,
// a worker retrying with AddAfter (runConcurrently), and nothing left
// registered.
func TestTracedQueueConcurrent(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	q := tracedQueue(rec)
	tq := q.(*dropin.TracedQueue[string])
	runConcurrently(t, rec, q, tq.Stats, concurrentRun{
		producers: 4, workers: 3, addsEach: 500, keys: 20, seed: 7, retryEvery: 7,
		retry:  func(item string) { q.AddAfter(item, time.Millisecond) },
		finish: q.Forget,
	})
	require.Zero(t, handlerctx.Active(), "every registration ended")
}

// concurrentRun is what runConcurrently does to a queue.
type concurrentRun struct {
	producers, workers, addsEach int
	keys                         int    // the producers add keys ns/k0 … ns/k<keys-1>
	seed                         uint64 // of each producer's random keys, with its number
	// Worker 0 hands every retryEvery-th item it gets to retry, until the
	// producers are done; every worker calls finish (if set) before Done.
	retryEvery int
	retry      func(item string)
	finish     func(item string)
}

// runConcurrently runs producers and workers on their own goroutines
// against q (under -race in hack/test.sh), waits until q is idle, shuts it
// down with a drain, and checks the spans rec recorded against stats:
// every Add counted, every Get matched by a process span that ends,
// nothing left open.
//
// The workers stop retrying once the producers are done, before the wait
// for an idle queue: otherwise a worker whose Get had left inner but not
// yet reached the wrapper (Len 0, Processing 0) could retry after the
// shutdown, an add counted that no span stands for, as Stats documents
// (it failed so in CI).
func runConcurrently(t *testing.T, rec *tracetest.SpanRecorder, q workqueue.TypedInterface[string], stats func() dropin.QueueStats, run concurrentRun) {
	t.Helper()
	var processed atomic.Int64
	var noRetries atomic.Bool
	var work, add sync.WaitGroup
	for w := range run.workers {
		work.Go(func() {
			for {
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				if w == 0 && processed.Load()%int64(run.retryEvery) == 0 && !noRetries.Load() {
					run.retry(item) // a retry, from the worker
				}
				processed.Add(1)
				if run.finish != nil {
					run.finish(item)
				}
				q.Done(item)
			}
		})
	}
	for p := range run.producers {
		add.Go(func() {
			r := rand.New(rand.NewPCG(uint64(p), run.seed))
			for range run.addsEach {
				q.Add(fmt.Sprintf("ns/k%d", r.IntN(run.keys)))
			}
		})
	}
	add.Wait()
	noRetries.Store(true)
	require.Eventually(t, func() bool { return q.Len() == 0 && stats().Processing == 0 }, testutil.Limit, time.Millisecond)
	q.ShutDownWithDrain()
	work.Wait()

	st := stats()
	spantest.CheckQueueRun(t, rec, spantest.QueueCounts{Adds: st.Adds, Processed: st.Processed, Processing: st.Processing}, processed.Load(), run.producers*run.addsEach)
}

// pausingQueue is client-go's queue, made to stop for a test inside Get
// (after its own Get has taken the key) and inside Done (before its own
// Done): the moments a key is on its way from the queue to a worker and
// back into the queue, which Stats must never read as idle.
type pausingQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	inGet, inDone     chan struct{}
	resumed           chan struct{}
	pauseGet, pauseDo atomic.Bool
}

func (p *pausingQueue) Get() (string, bool) {
	item, shutdown := p.TypedRateLimitingInterface.Get()
	if p.pauseGet.CompareAndSwap(true, false) {
		p.inGet <- struct{}{}
		<-p.resumed
	}
	return item, shutdown
}

func (p *pausingQueue) Done(item string) {
	if p.pauseDo.CompareAndSwap(true, false) {
		p.inDone <- struct{}{}
		<-p.resumed
	}
	p.TypedRateLimitingInterface.Done(item)
}

// TestStatsNeverReadsAKeyInHandAsIdle: Depth and Processing never both
// read 0 while a key is in the queue's hands, between inner's Get taking
// it and the worker getting it, and between Done and a key added again
// meanwhile going back into the queue. Before, Depth was inner's Len
// alone, read apart from Processing: the workshop kit's Burst, waiting for
// both to be 0, returned with a reconcile still to come (07-controller/2's
// solution failed its checker about one run in ten).
func TestStatsNeverReadsAKeyInHandAsIdle(t *testing.T) {
	inner := &pausingQueue{
		TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		inGet:                      make(chan struct{}), inDone: make(chan struct{}), resumed: make(chan struct{}),
	}
	q := dropin.NewTracedQueue(fmt.Sprintf("in-hand-%d", metricsRuns.Add(1)), inner).(*dropin.TracedQueue[string])
	defer q.ShutDown()
	q.SetTracerProvider(noop.NewTracerProvider())
	q.Stats() // a Stats caller: count from here
	busy := func(when string) {
		t.Helper()
		if st := q.Stats(); st.Depth+st.Processing == 0 {
			t.Errorf("%s: Stats read the queue idle (%+v) with ns/a in its hands", when, st)
		}
	}

	q.Add("ns/a")
	inner.pauseGet.Store(true)
	got := make(chan string)
	go func() { item, _ := q.Get(); got <- item }()
	<-inner.inGet // inner has taken ns/a; the worker does not have it yet
	busy("inside Get")
	inner.resumed <- struct{}{}
	item := <-got

	q.Add(item) // added again while processed: dirty, back in the queue at Done
	inner.pauseDo.Store(true)
	done := make(chan struct{})
	go func() { q.Done(item); close(done) }()
	<-inner.inDone // Done's bookkeeping is over; inner has not put ns/a back yet
	busy("inside Done")
	inner.resumed <- struct{}{}
	<-done
	if st := q.Stats(); st.Depth != 1 || st.Processing != 0 {
		t.Errorf("after Done: %+v, want ns/a waiting again (Depth 1) and none processing", st)
	}
	item, _ = q.Get()
	q.Done(item)
	if st := q.Stats(); st.Depth != 0 || st.Processing != 0 || st.Processed != 2 {
		t.Errorf("at the end: %+v, want idle after two passes", st)
	}
}
