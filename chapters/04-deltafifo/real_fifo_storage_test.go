package deltafifo

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

func storageQueued(q *deltaChunks) []int {
	out := []int{}
	for d := range q.all() {
		out = append(out, d.Object.(int))
	}
	return out
}

// popAndCheck pops n from q and from the model, and requires the same
// entries out, the same entries left and the storage invariants.
func popAndCheck(t *testing.T, q *deltaChunks, model *[]int, n int) {
	t.Helper()
	got := storageValues(q.popFront(n, nil))
	require.Equal(t, (*model)[:n], got, "popped")
	*model = (*model)[n:]
	require.Equal(t, len(*model), q.len())
	require.NoError(t, q.checkInvariant())
}

func pushAndCheck(t *testing.T, q *deltaChunks, model *[]int, next *int, n int) {
	t.Helper()
	for range n {
		q.push(storageDelta(*next))
		*model = append(*model, *next)
		*next++
	}
	require.Equal(t, len(*model), q.len())
	require.NoError(t, q.checkInvariant())
}

// The RealFIFO's chunked storage at the exact edges of a chunk: runs that
// end one before, at, and one after a chunk boundary, pops (the size of a
// PopBatch, 1,000) that span two and three chunks, draining to empty and
// queueing again into the kept chunk. An off-by-one in push, popFront or
// all loses, repeats or reorders an entry here, or leaves a popped object
// in a slot (checkInvariant).
func TestDeltaChunksChunkEdges(t *testing.T) {
	const c = deltaChunkSize
	var q deltaChunks
	model := []int{}
	next := 0
	require.NoError(t, q.checkInvariant())
	assert.Zero(t, q.chunks(), "an unused queue allocates nothing")

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
	require.Zero(t, q.len())
	assert.Zero(t, q.head, "an emptied queue starts again at its chunk's front")
	assert.LessOrEqual(t, q.chunks(), 2, "drained: the reused chunk and at most one spare")

	assert.Panics(t, func() { q.popFront(1, nil) }, "popping more than is queued")
}

// Random pushes and pops against a slice, with a fixed seed: pushes of up
// to one and a half chunks, pops of up to two chunks and a bit, so the
// backlog keeps rising and falling across chunk boundaries.
func TestDeltaChunksMatchesSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 4))
	var q deltaChunks
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
		for d := range q.all() {
			if len(prefix) == k {
				break
			}
			prefix = append(prefix, d.Object.(int))
		}
		require.Equal(t, model[:k], prefix)
	}
}

// What the storage allocates: one chunk per deltaChunkSize entries of
// backlog, however large the backlog grows (a growing slice reallocates
// and copies itself at each step, and the sum is several times the peak),
// nothing once the chunks exist, and after draining it keeps at most two
// chunks, not the peak.
func TestDeltaChunksAllocatesNearThePeak(t *testing.T) {
	const backlog = 60_000
	chunksNeeded := (backlog + deltaChunkSize - 1) / deltaChunkSize
	d := storageDelta(1)
	var q *deltaChunks
	allocs := testing.AllocsPerRun(3, func() {
		q = new(deltaChunks)
		for range backlog {
			q.push(d)
		}
	})
	assert.Equal(t, float64(chunksNeeded+1), allocs, "the queue itself, and one chunk per %d entries", deltaChunkSize)
	assert.Equal(t, chunksNeeded, q.chunks())
	require.NoError(t, q.checkInvariant())

	// A backlog that rises and falls across a chunk boundary, again and
	// again, reuses the spare.
	q.popFront(backlog, nil)
	require.NoError(t, q.checkInvariant())
	assert.LessOrEqual(t, q.chunks(), 2, "drained")
	buf := make([]Delta, 0, deltaChunkSize+10)
	allocs = testing.AllocsPerRun(100, func() {
		for range deltaChunkSize + 10 {
			q.push(d)
		}
		q.popFront(deltaChunkSize+10, buf[:0])
	})
	assert.Zero(t, allocs)
	require.NoError(t, q.checkInvariant())
}

// checkInvariant itself can fail: a popped object left in its slot, a
// count that does not match the chunks.
func TestDeltaChunksInvariantCatchesStaleSlots(t *testing.T) {
	var q deltaChunks
	for i := range deltaChunkSize + 2 {
		q.push(storageDelta(i))
	}
	q.popFront(3, nil)
	require.NoError(t, q.checkInvariant())
	q.first.deltas[1] = storageDelta(1)
	assert.ErrorContains(t, q.checkInvariant(), "unused slot 1")
	q.first.deltas[1] = Delta{}
	q.count++
	assert.ErrorContains(t, q.checkInvariant(), "count")
	q.count--
	require.NoError(t, q.checkInvariant())
	// The popped entries came out oldest first, and all() skips them.
	assert.Equal(t, []int{3, 4, 5}, storageQueued(&q)[:3])
	assert.True(t, slices.Equal(storageQueued(&q), func() []int {
		var want []int
		for i := 3; i < deltaChunkSize+2; i++ {
			want = append(want, i)
		}
		return want
	}()))
}
