package crqueue_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/dropin/crqueue"
	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
)

func liveQueues(t *testing.T, url string) []livepage.ProcessQueue {
	t.Helper()
	res, err := http.Get(url + "/api/state")
	require.NoError(t, err)
	defer res.Body.Close()
	var st livepage.ProcessState
	require.NoError(t, json.NewDecoder(res.Body).Decode(&st))
	return st.Process.Queues
}

// decodeQueues reads an api/state answer's queues, nil if it does not
// decode; it closes res's body.
func decodeQueues(res *http.Response) []livepage.ProcessQueue {
	defer res.Body.Close()
	var st livepage.ProcessState
	if json.NewDecoder(res.Body).Decode(&st) != nil {
		return nil
	}
	return st.Process.Queues
}

// The traced priority queue shows in the process's live view by its name,
// with its depth, until it is shut down.
func TestTracedPriorityQueueShowsInTheLiveView(t *testing.T) {
	hs := httptest.NewServer(dropin.LiveViewHandler())
	defer hs.Close()
	q := crqueue.NewTracedPriorityQueue("crqueue-liveview", priorityqueue.New[string]("crqueue-liveview"))
	q.Add("a")
	q.Add("b")
	require.Eventually(t, func() bool { return q.Len() == 2 }, 5e9, 1e6)
	qs := liveQueues(t, hs.URL)
	i := slices.IndexFunc(qs, func(q livepage.ProcessQueue) bool { return q.Name == "crqueue-liveview" })
	require.GreaterOrEqual(t, i, 0, "%+v", qs)
	require.Equal(t, "priority", qs[i].Kind)
	require.Equal(t, 2, qs[i].Depth)
	q.ShutDown()
	require.False(t, slices.ContainsFunc(liveQueues(t, hs.URL), func(q livepage.ProcessQueue) bool { return q.Name == "crqueue-liveview" }))
}

// TestTracedPriorityQueueRetriesAndLongestInTheLiveView: the page shows
// the priority queue's retries (its AddRateLimited calls) and the key in
// process longest, as it does for dropin's queues. Before, the live view
// read both through methods only dropin's own queues had: the priority
// queue showed 0 for each, whatever it did.
func TestTracedPriorityQueueRetriesAndLongestInTheLiveView(t *testing.T) {
	hs := httptest.NewServer(dropin.LiveViewHandler())
	defer hs.Close()
	const name = "crqueue-liveview-retries"
	q := crqueue.NewTracedPriorityQueue(name, priorityqueue.New[string](name))
	defer q.ShutDown()
	find := func() livepage.ProcessQueue {
		qs := liveQueues(t, hs.URL)
		i := slices.IndexFunc(qs, func(q livepage.ProcessQueue) bool { return q.Name == name })
		require.GreaterOrEqual(t, i, 0, "%+v", qs)
		return qs[i]
	}
	require.Zero(t, find().Retries)
	q.AddRateLimited("a")
	q.AddRateLimited("a")
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, "b", "c")
	q.Add("d")
	item, _ := q.Get()
	require.Equal(t, "d", item, "the only ready key")
	got := find()
	require.EqualValues(t, 4, got.Retries)
	require.Equal(t, 1, got.InFlight)
	require.Positive(t, got.LongestMicros, "d is in process")
	q.Done(item)
	require.Zero(t, find().LongestMicros, "nothing in process")
}
