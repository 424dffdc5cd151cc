package crqueue_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-anatomy/informer-anatomy/dropin/crqueue"
	"github.com/informer-anatomy/informer-anatomy/internal/handlerctx"
	"github.com/informer-anatomy/informer-anatomy/internal/spantest"
)

// TestTracedPriorityQueueConcurrent: producers adding at random priorities
// and workers retrying some keys, each on its own goroutine (run it with
// -race): every Get matched by a process span that ends, every add
// counted, nothing left registered or open.
func TestTracedPriorityQueueConcurrent(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	q := traced(rec, newPQ())
	tq := q.(*crqueue.TracedPriorityQueue[reconcile.Request])
	const producers, workers, addsEach = 4, 3, 300
	var processed atomic.Int64
	var noRetries atomic.Bool
	var work, add sync.WaitGroup
	for w := range workers {
		work.Go(func() {
			for {
				item, _, shutdown := q.GetWithPriority()
				if shutdown {
					return
				}
				if w == 0 && processed.Load()%7 == 0 && !noRetries.Load() {
					q.AddWithOpts(priorityqueue.AddOpts{After: time.Millisecond, Priority: new(handler.LowPriority)}, item)
				}
				processed.Add(1)
				q.Forget(item)
				q.Done(item)
			}
		})
	}
	priorities := []*int{nil, new(handler.LowPriority), new(5)}
	for p := range producers {
		add.Go(func() {
			r := rand.New(rand.NewPCG(uint64(p), 9))
			for range addsEach {
				q.AddWithOpts(priorityqueue.AddOpts{Priority: priorities[r.IntN(len(priorities))]}, req(fmt.Sprintf("k%d", r.IntN(20))))
			}
		})
	}
	add.Wait()
	noRetries.Store(true)
	require.Eventually(t, func() bool { return q.Len() == 0 && tq.Stats().Processing == 0 }, 20*time.Second, time.Millisecond)
	q.ShutDown()
	work.Wait()

	st := tq.Stats()
	spantest.CheckQueueRun(t, rec, spantest.QueueCounts{Adds: st.Adds, Processed: st.Processed, Processing: st.Processing}, processed.Load(), producers*addsEach)
	require.Zero(t, handlerctx.Active(), "every registration ended")
}
