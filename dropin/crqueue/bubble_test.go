package crqueue_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/dropin/crqueue"
	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
)

// TestLiveViewLeavesABubblesPriorityQueueAlone: a controller author's
// synctest test makes a traced priority queue while a live view is open in
// the process (a page, or only its history sampler). The priority queue
// answers Len by flushing its add buffer, which signals a channel of the
// bubble; read by the live view's goroutines, outside the bubble, the
// runtime ended the test binary ("send on synctest channel from outside
// bubble"), as it did ours in CI (the sampler reading
// TestTracedPriorityQueueMatchesBare's queues). Here the page is polled
// from outside without pause while the bubble adds 20,000 keys one by one:
// before the fix the binary died within a fifth of a second, every run. Now the page never
// lists the bubble's queue, and the queue works as it would alone.
func TestLiveViewLeavesABubblesPriorityQueueAlone(t *testing.T) {
	hs := httptest.NewServer(dropin.LiveViewHandler())
	defer hs.Close()
	const name = "crqueue-in-a-bubble"
	stop := make(chan struct{})
	var polls int
	var listed bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			res, err := http.Get(hs.URL + "/api/state")
			if err != nil {
				continue
			}
			qs := decodeQueues(res)
			polls++
			if slices.ContainsFunc(qs, func(q livepage.ProcessQueue) bool { return q.Name == name }) {
				listed = true
			}
		}
	})
	const adds = 20000
	synctest.Test(t, func(t *testing.T) {
		q := crqueue.NewTracedPriorityQueue(name, priorityqueue.New[string](name))
		defer q.ShutDown()
		for i := range adds {
			q.Add(strconv.Itoa(i))
		}
		synctest.Wait()
		require.Equal(t, adds, q.Len())
	})
	close(stop)
	wg.Wait()
	require.Positive(t, polls, "the page was read while the bubble ran")
	require.False(t, listed, "a queue of a synctest bubble is not read from outside it")
}
