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
