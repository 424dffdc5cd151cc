package deltafifo

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/internal/chunkq"
)

// storageDelta is the i-th entry the storage tests queue: its Object is i,
// so order and loss show in the values popped.
func storageDelta(i int) Delta { return Delta{Type: Updated, Object: i} }

// storageValues are the Objects of ds, for comparing with the model.
func storageValues(ds []Delta) []int {
	out := make([]int, len(ds))
	for i, d := range ds {
		out[i] = d.Object.(int)
	}
	return out
}

func storageQueued(q *chunkq.Queue[Delta]) []int {
	out := []int{}
	for d := range q.All() {
		out = append(out, d.Object.(int))
	}
	return out
}

// popAndCheck pops n from q and from the model, and requires the same
// entries out, the same entries left and the storage invariants.
func popAndCheck(t *testing.T, q *chunkq.Queue[Delta], model *[]int, n int) {
	t.Helper()
	got := storageValues(q.PopFront(n, nil))
	require.Equal(t, (*model)[:n], got, "popped")
	*model = (*model)[n:]
	require.Equal(t, len(*model), q.Len())
	require.NoError(t, q.CheckInvariant(isZeroDelta))
}

func pushAndCheck(t *testing.T, q *chunkq.Queue[Delta], model *[]int, next *int, n int) {
	t.Helper()
	for range n {
		q.Push(storageDelta(*next))
		*model = append(*model, *next)
		*next++
	}
	require.Equal(t, len(*model), q.Len())
	require.NoError(t, q.CheckInvariant(isZeroDelta))
}

// The RealFIFO's chunked storage at the exact edges of a chunk: runs that
// end one before, at, and one after a chunk boundary, pops (the size of a
// PopBatch, 1,000) that span two and three chunks, draining to empty and
// queueing again into the kept chunk. An off-by-one in push, popFront or
// all loses, repeats or reorders an entry here, or leaves a popped object
// in a slot (checkInvariant).
func TestStorageChunkEdges(t *testing.T) {
	const c = deltaChunkSize
	q := newStorage()
	model := []int{}
	next := 0
	require.NoError(t, q.CheckInvariant(isZeroDelta))
	inUse, spare := q.Chunks()
	assert.Zero(t, inUse+spare, "an unused queue allocates nothing")

	for _, step := range []struct{ push, pop int }{
		{c - 1, 0}, {1, 0}, {1, 0}, // fill to one past a chunk
		{0, c - 1}, {0, 1}, {0, 1}, // pop to exactly the same edges
		{c, c},                      // fill one chunk from its front, drain
		{3*c + 7, c - 1},            // leave one entry in the first chunk
		{0, 1000},                   // a batch across three chunks
		{0, 3*c + 7 - c + 1 - 1000}, // drain
		{1, 1}, {c + 1, 2}, {0, c - 1},
		{2 * c, 2*c - 1}, {0, 1},
	} {
		pushAndCheck(t, &q, &model, &next, step.push)
		require.Equal(t, model, storageQueued(&q), "all() after %d pushed", step.push)
		popAndCheck(t, &q, &model, step.pop)
		require.Equal(t, model, storageQueued(&q), "all() after %d popped", step.pop)
	}
	require.Zero(t, q.Len())
	inUse, spare = q.Chunks()
	assert.Equal(t, 1, inUse, "drained: the queue keeps its one chunk")
	assert.LessOrEqual(t, spare, 1, "and at most one spare")
}

// Random pushes and pops against a slice, with a fixed seed: pushes of up
// to one and a half chunks, pops of up to two chunks and a bit, so the
// backlog keeps rising and falling across chunk boundaries.
func TestStorageMatchesSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 4))
	q := newStorage()
	model := []int{}
	next := 0
	for range 1000 {
		if rng.IntN(2) == 0 {
			pushAndCheck(t, &q, &model, &next, rng.IntN(3*deltaChunkSize/2))
		} else {
			popAndCheck(t, &q, &model, rng.IntN(min(len(model), 2*deltaChunkSize+3)+1))
		}
		// Stopping early, as PopBatch's run does, yields a prefix.
		k := rng.IntN(len(model) + 1)
		prefix := []int{}
		for d := range q.All() {
			if len(prefix) == k {
				break
			}
			prefix = append(prefix, d.Object.(int))
		}
		require.Equal(t, model[:k], prefix)
	}
}
