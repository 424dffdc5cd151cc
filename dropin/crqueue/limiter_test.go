package crqueue_test

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-anatomy/informer-anatomy/dropin/crqueue"
	"github.com/informer-anatomy/informer-anatomy/internal/spantest"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// scriptedLimiter answers When with the delay set for the key and counts
// the calls; Forget clears the count, NumRequeues reads it.
type scriptedLimiter struct {
	mu    sync.Mutex
	delay map[string]time.Duration
	when  map[string]int
}

func (l *scriptedLimiter) When(r reconcile.Request) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.when[r.Name]++
	return l.delay[r.Name]
}

func (l *scriptedLimiter) Forget(r reconcile.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.when, r.Name)
}

func (l *scriptedLimiter) NumRequeues(r reconcile.Request) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.when[r.Name]
}

// TestNewQueueKnowsTheLimitersDelay: behind NewQueue the wrapper is handed
// the controller's rate limiter. Each rate-limited add asks its When once
// (not once by the wrapper and again by the priority queue), the key is
// ready when the priority queue's rule says (the limiter's delay, or the
// shorter of it and After), and its workqueue.delayed span lasts exactly
// that long, though the Get comes a second or two later: the wait after it is
// workqueue.queued. Without the limiter the wrapper would stretch
// workqueue.delayed to the Get.
func TestNewQueueKnowsTheLimitersDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := &scriptedLimiter{
			delay: map[string]time.Duration{"a": 3 * time.Second, "b": 2 * time.Second, "c": 4 * time.Second, "d": 5 * time.Second, "e": 6 * time.Second},
			when:  map[string]int{},
		}
		rec := tracetest.NewSpanRecorder()
		q := crqueue.NewQueue[reconcile.Request]("crqueue-limiter", lim).(*crqueue.TracedPriorityQueue[reconcile.Request])
		q.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
		defer q.ShutDown()

		// readyAt: the key is ready at d after the add, not a nanosecond
		// before.
		readyAt := func(k string, d time.Duration) {
			t.Helper()
			time.Sleep(d - time.Nanosecond)
			synctest.Wait()
			require.Zero(t, q.Len(), "%s not ready before %v", k, d)
			time.Sleep(time.Nanosecond)
			synctest.Wait()
			require.Equal(t, 1, q.Len(), "%s ready at %v", k, d)
		}
		take := func(k string, priority int) {
			t.Helper()
			item, p, _ := q.GetWithPriority()
			require.Equal(t, k, item.Name)
			require.Equal(t, priority, p, "%s keeps its priority", k)
			require.Equal(t, 1, q.NumRequeues(item), "%s: When asked once", k)
			q.Forget(item)
			require.Zero(t, q.NumRequeues(item), "Forget reaches the limiter")
			q.Done(item)
		}
		q.AddRateLimited(req("a"))
		readyAt("a", 3*time.Second)
		time.Sleep(2 * time.Second)
		take("a", 0)
		// The limiter's 2 s is shorter than After.
		q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true, After: 10 * time.Second, Priority: new(5)}, req("b"))
		readyAt("b", 2*time.Second)
		time.Sleep(2 * time.Second)
		take("b", 5)
		// After's 1 s is shorter than the limiter's.
		q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true, After: time.Second}, req("c"))
		readyAt("c", time.Second)
		time.Sleep(2 * time.Second)
		take("c", 0)
		// Two items, two delays: 5 s and 6 s.
		q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, req("d"), req("e"))
		readyAt("d", 5*time.Second)
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, 2, q.Len(), "e ready at 6 s")
		time.Sleep(time.Second)
		take("d", 0)
		take("e", 0)
		require.Equal(t, map[string]int{}, lim.when, "When asked once per item, each forgotten")
		want := map[string]time.Duration{"a": 3 * time.Second, "b": 2 * time.Second, "c": time.Second, "d": 5 * time.Second, "e": 6 * time.Second}
		wantQueued := map[string]time.Duration{"a": 2 * time.Second, "b": 2 * time.Second, "c": 2 * time.Second, "d": 2 * time.Second, "e": time.Second}

		all := spantest.Spans(rec.Ended())
		delayed := all.Named(tracing.SpanWorkqueueDelayed)
		require.Len(t, delayed, 5)
		queued := all.Named(tracing.SpanWorkqueueQueued)
		require.Len(t, queued, 5)
		for _, p := range all.Named(tracing.SpanWorkqueueProcess) {
			k := spantest.Attr(p, tracing.KeyWorkqueueKey).AsString()
			qs := all.ByID(p.Parent().SpanID())
			require.Equal(t, wantQueued[k[len("ns/"):]], qs.EndTime().Sub(qs.StartTime()), "%s: queued from ready to Get", k)
			ds := all.ByID(qs.Parent().SpanID())
			require.Equal(t, tracing.SpanWorkqueueDelayed, ds.Name(), k)
			require.Equal(t, want[k[len("ns/"):]], ds.EndTime().Sub(ds.StartTime()), "%s: delayed lasts the limiter's delay", k)
		}
	})
}
