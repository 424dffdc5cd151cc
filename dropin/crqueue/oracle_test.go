package crqueue_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-anatomy/informer-anatomy/dropin/crqueue"
	"github.com/informer-anatomy/informer-anatomy/internal/spantest"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// TestTracedPriorityQueueMatchesBare: 1,500 random calls (fixed seed) on a
// bare priority queue and a traced one, AddWithOpts with random
// priorities, delays and (in two runs) rate limiting among them,
// AddRateLimited too: the same key and priority from every
// GetWithPriority, the same Len and NumRequeues after every call. Without
// rate limiting, and with it when the wrapper knows the limiter (as behind
// NewQueue), every queued span lasts as long as the priority queue says
// the key was ready before its Get, and every process span from Get to
// Done; and with the limiter known, the traced queue's own metrics (adds,
// queue durations, work durations, retries) are the bare queue's after
// every call: handing inner the limiter's delay as After, not
// RateLimited, changes nothing it reports. In every run every span ends
// and every add is accounted for once.
func TestTracedPriorityQueueMatchesBare(t *testing.T) {
	for _, c := range []struct {
		rateLimited, limiterKnown bool
	}{{false, false}, {true, false}, {true, true}} {
		rateLimited := c.rateLimited
		t.Run(fmt.Sprintf("rateLimited=%v,limiterKnown=%v", rateLimited, c.limiterKnown), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := tracetest.NewSpanRecorder()
				m, mBare := &testutil.QueueMetrics{}, &testutil.QueueMetrics{}
				// Both on controller-runtime's default limiter, each its own.
				bare := priorityqueue.New("bare", func(o *priorityqueue.Opts[reconcile.Request]) { o.MetricProvider = mBare })
				var tq priorityqueue.PriorityQueue[reconcile.Request]
				if c.limiterKnown {
					lim := workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, 1000*time.Second)
					tq = crqueue.NewTracedPriorityQueueWithLimiter("test", priorityqueue.New("traced", func(o *priorityqueue.Opts[reconcile.Request]) {
						o.MetricProvider = m
						o.RateLimiter = lim
					}), lim)
					tq.(*crqueue.TracedPriorityQueue[reconcile.Request]).SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
				} else {
					tq = traced(rec, priorityqueue.New("traced", func(o *priorityqueue.Opts[reconcile.Request]) { o.MetricProvider = m }))
				}
				queues := []priorityqueue.PriorityQueue[reconcile.Request]{bare, tq}
				strict := !rateLimited || c.limiterKnown
				sameMetrics := func(desc string) {
					if !c.limiterKnown {
						return
					}
					adds, latency, work := m.Read()
					addsB, latencyB, workB := mBare.Read()
					require.Equal(t, addsB, adds, "%s: adds", desc)
					require.Equal(t, latencyB, latency, "%s: queue durations", desc)
					require.Equal(t, workB, work, "%s: work durations", desc)
					require.Equal(t, mBare.Retries(), m.Retries(), "%s: retries", desc)
				}
				r := rand.New(rand.NewPCG(5, 6))
				keys := []string{"a", "b", "c", "d"}
				priorities := []*int{nil, new(handler.LowPriority), new(10)}
				var processing []reconcile.Request
				check := func(desc string, call func()) {
					_, latency, work := m.Read()
					ended := len(rec.Ended())
					call()
					synctest.Wait()
					if !strict {
						return
					}
					_, latency2, work2 := m.Read()
					now := spantest.Spans(rec.Ended()[ended:])
					if len(latency2) > len(latency) {
						q := now.Named(tracing.SpanWorkqueueQueued)
						require.Len(t, q, 1, "%s: a queued span for the Get", desc)
						require.Equal(t, latency2[len(latency)], q[0].EndTime().Sub(q[0].StartTime()), "%s: queued lasts as long as the key was ready", desc)
					}
					if len(work2) > len(work) {
						p := now.Named(tracing.SpanWorkqueueProcess)
						require.Len(t, p, 1, "%s: the process span ends at Done", desc)
						require.Equal(t, work2[len(work)], p[0].EndTime().Sub(p[0].StartTime()), "%s: process lasts from Get to Done", desc)
					}
				}
				each := func(desc string, f func(q priorityqueue.PriorityQueue[reconcile.Request])) {
					f(bare)
					synctest.Wait()
					check(desc, func() { f(tq) })
				}
				get := func(desc string) {
					var got []got
					each(desc, func(q priorityqueue.PriorityQueue[reconcile.Request]) {
						item, priority, shutdown := q.GetWithPriority()
						require.False(t, shutdown)
						got = append(got, struct {
							name     string
							priority int
						}{item.Name, priority})
					})
					require.Equal(t, got[0], got[1], "%s: GetWithPriority", desc)
					processing = append(processing, req(got[0].name))
				}
				for step := range 1500 {
					key := req(keys[r.IntN(len(keys))])
					desc := fmt.Sprintf("step %d", step)
					switch op := r.IntN(8); op {
					case 0, 1:
						o := priorityqueue.AddOpts{Priority: priorities[r.IntN(len(priorities))]}
						if r.IntN(2) == 0 {
							o.After = time.Duration(r.IntN(45)-5) * time.Millisecond
						}
						o.RateLimited = rateLimited && r.IntN(3) == 0
						items := []reconcile.Request{key}
						if r.IntN(4) == 0 {
							items = append(items, req(keys[r.IntN(len(keys))]))
						}
						each(desc, func(q priorityqueue.PriorityQueue[reconcile.Request]) { q.AddWithOpts(o, items...) })
					case 2:
						each(desc, func(q priorityqueue.PriorityQueue[reconcile.Request]) { q.Add(key) })
					case 3:
						if rateLimited && r.IntN(3) == 0 {
							each(desc, func(q priorityqueue.PriorityQueue[reconcile.Request]) { q.AddRateLimited(key) })
							break
						}
						d := time.Duration(r.IntN(45)-5) * time.Millisecond
						each(desc, func(q priorityqueue.PriorityQueue[reconcile.Request]) { q.AddAfter(key, d) })
					case 4, 5:
						// A ready key no worker holds exists when more keys are
						// ready than are processing (each holds back at most one).
						if bare.Len() > len(processing) {
							get(desc)
						}
					case 6:
						if len(processing) == 0 {
							continue
						}
						i := r.IntN(len(processing))
						item := processing[i]
						processing = slices.Delete(processing, i, i+1)
						each(desc, func(q priorityqueue.PriorityQueue[reconcile.Request]) {
							q.Forget(item)
							q.Done(item)
						})
					case 7:
						time.Sleep(time.Duration(r.IntN(30)) * time.Millisecond)
						synctest.Wait()
					}
					require.Equal(t, bare.Len(), tq.Len(), "%s: Len", desc)
					sameMetrics(desc)
					for _, k := range keys {
						require.Equal(t, bare.NumRequeues(req(k)), tq.NumRequeues(req(k)), "%s: NumRequeues", desc)
					}
				}
				for _, item := range processing {
					each("drain: Done", func(q priorityqueue.PriorityQueue[reconcile.Request]) { q.Done(item) })
				}
				processing = nil
				time.Sleep(time.Hour)
				synctest.Wait()
				for bare.Len() > 0 {
					get("drain: Get")
					item := processing[0]
					processing = nil
					each("drain: Done", func(q priorityqueue.PriorityQueue[reconcile.Request]) { q.Done(item) })
				}
				require.Zero(t, tq.Len())
				sameMetrics("drained")
				for _, q := range queues {
					q.ShutDown()
				}
				all := spantest.Spans(rec.Ended())
				require.Len(t, all, len(rec.Started()), "every span ended")
				if strict {
					_, latency, work := m.Read()
					require.Len(t, all.Named(tracing.SpanWorkqueueQueued), len(latency), "a queued span per Get")
					require.Len(t, all.Named(tracing.SpanWorkqueueProcess), len(work), "a process span per Done")
				}
				merged := 0
				for _, a := range all.Named(tracing.SpanWorkqueueAdd) {
					if spantest.Attr(a, tracing.KeyWorkqueueCoalesced).AsBool() {
						merged++
					}
				}
				t.Logf("%d adds (%d merged), %d delayed, %d processed", len(all.Named(tracing.SpanWorkqueueAdd)), merged,
					len(all.Named(tracing.SpanWorkqueueDelayed)), len(all.Named(tracing.SpanWorkqueueProcess)))
				require.Greater(t, merged, 100, "the run merged adds")
				require.Greater(t, len(all.Named(tracing.SpanWorkqueueDelayed)), 50, "the run waited for delays")
				require.Greater(t, len(all.Named(tracing.SpanWorkqueueProcess)), 100, "the run processed keys")
				spantest.CheckWorkqueueAccounting(t, all, strict)
			})
		})
	}
}
