package dropin_test

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"k8s.io/client-go/util/workqueue"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/metrics"
	"github.com/informer-anatomy/informer-anatomy/internal/spantest"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// countingLimiter is a rate limiter of the test's own, which no reflection
// on client-go's queue could know the delays of: every When answers delay
// and counts; NumRequeues is the count since the key's last Forget.
type countingLimiter struct {
	delay time.Duration

	mu             sync.Mutex
	whens, forgets int
	requeues       map[string]int
}

func newCountingLimiter(delay time.Duration) *countingLimiter {
	return &countingLimiter{delay: delay, requeues: map[string]int{}}
}

func (l *countingLimiter) When(item string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.whens++
	l.requeues[item]++
	return l.delay
}

func (l *countingLimiter) Forget(item string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forgets++
	delete(l.requeues, item)
}

func (l *countingLimiter) NumRequeues(item string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.requeues[item]
}

func (l *countingLimiter) calls() (whens, forgets int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.whens, l.forgets
}

// TestTracedRateLimitingQueueWithConfigAsksItsLimiter: with NewTracedQueue's
// reflection off (as after a client-go upgrade that renamed the field it
// reads), a queue from NewTracedRateLimitingQueueWithConfig still knows
// what AddRateLimited's delay is: the limiter it was given is asked once
// per AddRateLimited (and by nobody else), the workqueue.delayed span
// lasts the limiter's 3 s, and client-go's queue, which reports its own
// metrics, counts its workqueue_queue_duration_seconds from the end of that
// delay to the Get (7 s). The same calls behind NewTracedQueue, which then
// finds no limiter, show what the test tells apart: a delayed span lasting
// to the Get. The queue's metrics are the same 7 s there: the wrapper
// forwards AddRateLimited, and client-go's queue measures itself.
func TestTracedRateLimitingQueueWithConfigAsksItsLimiter(t *testing.T) {
	reader := installMeterProvider()
	dropin.SkipRateLimiterOf(t)
	for _, tc := range []struct {
		ctor              string
		delayed, queueDur time.Duration
	}{
		{"NewTracedRateLimitingQueueWithConfig", 3 * time.Second, 7 * time.Second},
		{"NewTracedQueue without its limiter", 10 * time.Second, 7 * time.Second},
	} {
		t.Run(tc.ctor, func(t *testing.T) {
			// The global MeterProvider accumulates over -count runs: each run
			// has a series of its own.
			name := fmt.Sprintf("asks-limiter-%d", wqRuns.Add(1))
			synctest.Test(t, func(t *testing.T) {
				lim := newCountingLimiter(3 * time.Second)
				config := workqueue.TypedRateLimitingQueueConfig[string]{Name: name, MetricsProvider: dropin.WorkqueueMetricsProvider()}
				var q workqueue.TypedRateLimitingInterface[string]
				if tc.ctor == "NewTracedRateLimitingQueueWithConfig" {
					q = dropin.NewTracedRateLimitingQueueWithConfig(lim, config)
				} else {
					q = dropin.NewTracedQueue(name, workqueue.NewTypedRateLimitingQueueWithConfig(lim, config))
				}
				rec := tracetest.NewSpanRecorder()
				q.(*dropin.TracedQueue[string]).SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
				defer q.ShutDown()

				q.Add("ns/a")
				item, _ := q.Get()
				q.AddRateLimited(item) // the reconcile failed
				q.Done(item)
				whens, _ := lim.calls()
				require.Equal(t, 1, whens, "When asked once for the one AddRateLimited")
				time.Sleep(time.Second)
				synctest.Wait()
				require.Zero(t, q.Len(), "not ready before the limiter's 3 s")
				time.Sleep(9 * time.Second)
				synctest.Wait()
				require.Equal(t, 1, q.Len(), "ready after the limiter's 3 s")
				item, _ = q.Get() // at 10 s
				require.Equal(t, 1, q.NumRequeues(item), "the limiter's count")
				q.Forget(item)
				q.Done(item)
				whens, forgets := lim.calls()
				require.Equal(t, []int{1, 1}, []int{whens, forgets}, "When once in all, Forget reaches the limiter")

				all := spantest.Spans(rec.Ended())
				delayed := all.Named(tracing.SpanWorkqueueDelayed)
				require.Len(t, delayed, 1)
				require.Equal(t, tc.delayed, delayed[0].EndTime().Sub(delayed[0].StartTime()), "workqueue.delayed")
				process := all.Named(tracing.SpanWorkqueueProcess)
				require.Len(t, process, 2)
				require.Equal(t, delayed[0].SpanContext().SpanID(), all.ParentOf(process[1]).Parent().SpanID(), "the retry's process is the delay's")
				require.EqualValues(t, 1, spantest.Attr(process[1], tracing.KeyWorkqueueRequeues).AsInt64())
			})
			// Collected outside the bubble: the collection also reads the
			// process's other instruments, such as the informers of other
			// tests, whose channels a bubble must not touch.
			rm := collectMetrics(t, reader)
			attrs := map[string]string{"name": name}
			latency := wqLookup(t, rm, metrics.WorkqueueQueueDuration, attrs)
			require.True(t, latency.found)
			require.Equal(t, uint64(2), latency.hist.Count, "the first Add's Get (0 s) and the retry's")
			require.InDelta(t, tc.queueDur.Seconds(), latency.hist.Sum, 1e-9, "the retry waits from the end of its delay")
			require.Equal(t, 1.0, wqLookup(t, rm, metrics.WorkqueueRetries, attrs).value, "one retry")
		})
	}
}

// TestTracedRateLimitingQueueWithConfigPassesConfigOn: config means what
// it means to client-go's constructor. Each case gives the bare client-go
// queue and the traced one the same config (its own provider, delaying
// queue or clock each) and the same calls, and requires the same from
// both: MetricsProvider gets the queue's retries; no Name, no metrics;
// DelayingQueue is where the keys wait; Clock is what their delays run on.
func TestTracedRateLimitingQueueWithConfigPassesConfigOn(t *testing.T) {
	type built struct {
		q  workqueue.TypedRateLimitingInterface[string]
		m  *testutil.QueueMetrics // config's provider, or the DelayingQueue's
		dq workqueue.TypedDelayingInterface[string]
		fc *testingclock.FakeClock
	}
	for _, tc := range []struct {
		name string
		// config fills in b's config, keeping what it made in b.
		config func(b *built) workqueue.TypedRateLimitingQueueConfig[string]
		check  func(t *testing.T, b *built)
	}{
		{"MetricsProvider", func(b *built) workqueue.TypedRateLimitingQueueConfig[string] {
			b.m = &testutil.QueueMetrics{}
			return workqueue.TypedRateLimitingQueueConfig[string]{Name: "cfg-provider", MetricsProvider: b.m}
		}, func(t *testing.T, b *built) {
			require.Equal(t, 1, b.m.Retries(), "the AddRateLimited, counted by client-go's delaying queue")
			adds, latency, _ := b.m.Read()
			require.Equal(t, 1, adds)
			require.Len(t, latency, 1)
		}},
		{"no Name", func(b *built) workqueue.TypedRateLimitingQueueConfig[string] {
			b.m = &testutil.QueueMetrics{}
			return workqueue.TypedRateLimitingQueueConfig[string]{MetricsProvider: b.m}
		}, func(t *testing.T, b *built) {
			adds, latency, _ := b.m.Read()
			require.Equal(t, []int{0, 0, 0}, []int{b.m.Retries(), adds, len(latency)}, "client-go records nothing for an unnamed queue")
		}},
		{"DelayingQueue", func(b *built) workqueue.TypedRateLimitingQueueConfig[string] {
			b.m = &testutil.QueueMetrics{}
			b.dq = workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: "cfg-delaying", MetricsProvider: b.m})
			return workqueue.TypedRateLimitingQueueConfig[string]{Name: "cfg-delaying-outer", DelayingQueue: b.dq}
		}, func(t *testing.T, b *built) {
			require.Equal(t, 1, b.m.Retries(), "the AddRateLimited reached the given delaying queue")
			adds, _, _ := b.m.Read()
			require.Equal(t, 1, adds, "the key waited there")
		}},
		{"Clock", func(b *built) workqueue.TypedRateLimitingQueueConfig[string] {
			b.fc = testingclock.NewFakeClock(time.Now())
			return workqueue.TypedRateLimitingQueueConfig[string]{Name: "cfg-clock", Clock: b.fc}
		}, func(*testing.T, *built) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, traced := range []bool{false, true} {
				synctest.Test(t, func(t *testing.T) {
					b := &built{}
					config := tc.config(b)
					lim := newCountingLimiter(time.Second)
					if traced {
						b.q = dropin.NewTracedRateLimitingQueueWithConfig(lim, config)
					} else {
						b.q = workqueue.NewTypedRateLimitingQueueWithConfig(lim, config)
					}
					defer b.q.ShutDown()
					if b.dq != nil {
						// The queue shuts it down too; this is for a queue that
						// did not take it, whose failure must not leave its
						// goroutine in the bubble.
						defer b.dq.ShutDown()
					}
					q := b.q
					q.AddRateLimited("ns/a")
					time.Sleep(time.Hour)
					synctest.Wait()
					if b.fc != nil {
						require.Zero(t, q.Len(), "traced=%v: the fake clock has not moved", traced)
						b.fc.Step(time.Second)
						synctest.Wait()
					}
					require.Equal(t, 1, q.Len(), "traced=%v", traced)
					if b.dq != nil {
						require.Equal(t, 1, b.dq.Len(), "traced=%v: the given delaying queue holds the key", traced)
					}
					item, _ := q.Get()
					q.Done(item)
					whens, _ := lim.calls()
					require.Equal(t, 1, whens, "traced=%v", traced)
					tc.check(t, b)
				})
			}
		})
	}
}

// TestTracedRateLimitingQueueWithConfigProvidedMetricsCountOnce: given
// WorkqueueMetricsProvider in config under its Name, client-go's queue
// reports the name's series and the wrapper none, so an add counts once.
func TestTracedRateLimitingQueueWithConfigProvidedMetricsCountOnce(t *testing.T) {
	reader := installMeterProvider()
	name := fmt.Sprintf("provided-%d", wqRuns.Add(1))
	synctest.Test(t, func(t *testing.T) {
		q := dropin.NewTracedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name, MetricsProvider: dropin.WorkqueueMetricsProvider()})
		defer q.ShutDown()
		q.Add("ns/a")
		q.AddRateLimited("ns/b")
		time.Sleep(time.Second)
		synctest.Wait()
		for range 2 {
			item, _ := q.Get()
			q.Done(item)
		}
	})
	rm := collectMetrics(t, reader) // outside the bubble, as above
	attrs := map[string]string{"name": name}
	require.Equal(t, 2.0, wqLookup(t, rm, metrics.WorkqueueAdds, attrs).value, "each add once")
	require.Equal(t, 1.0, wqLookup(t, rm, metrics.WorkqueueRetries, attrs).value, "the retry once")
}
