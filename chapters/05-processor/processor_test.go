package processor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// counting records the order of OnAdd calls; block, if set, holds the first
// call until closed.
type counting struct {
	mu    sync.Mutex
	got   []int
	block chan struct{}
	first sync.Once
}

func (c *counting) OnAdd(obj any, _ bool) {
	if c.block != nil {
		c.first.Do(func() { <-c.block })
	}
	c.mu.Lock()
	c.got = append(c.got, obj.(int))
	c.mu.Unlock()
}
func (c *counting) OnUpdate(_, _ any) {}
func (c *counting) OnDelete(any)      {}

func (c *counting) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.got)
}

func TestDistributeNeverWaitsForASlowHandlerAndOrderIsKept(t *testing.T) {
	const n = 3000 // more than a chunk: the buffer must take more chunks
	p := newSharedProcessor()
	slow := &counting{block: make(chan struct{})}
	fast := &counting{}
	tracer := noop.NewTracerProvider().Tracer("")
	for _, h := range []*counting{slow, fast} {
		l := newProcessListener(h, "h", 0, 0, time.Now(), syncedChecker{}, tracer, attribute.String("k", "v"))
		p.addListener(l)
		close(l.initialQueued)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.run(ctx) }()

	for i := range n {
		p.distribute(notification{kind: addKind, newObj: i}, false)
	}
	// All n were distributed while slow's first OnAdd is still blocked:
	// distribute never waited for it.
	testutil.Eventually(t, "fast handler got everything", func() bool { return fast.len() == n })
	assert.Zero(t, slow.len())
	var maxPending int64
	p.listenersLock.RLock()
	for l := range p.listeners {
		maxPending = max(maxPending, l.pendingLength.Load())
	}
	p.listenersLock.RUnlock()
	assert.Greater(t, maxPending, int64(notificationChunkSize), "the slow handler's buffer spanned more than one chunk")

	close(slow.block)
	testutil.Eventually(t, "slow handler caught up", func() bool { return slow.len() == n })
	for i, v := range slow.got {
		require.Equal(t, i, v, "per-listener order is kept")
	}
	cancel()
	<-done
}

// chunks counts the chunks r holds, spares included.
func (r *ringGrowing) chunks() int {
	n := 0
	for c := r.first; c != nil; c = c.next {
		n++
	}
	for c := r.spares; c != nil; c = c.next {
		n++
	}
	return n
}

// checkInvariant verifies the invariants stated on ringGrowing.
func (r *ringGrowing) checkInvariant() error {
	if (r.first == nil) != (r.last == nil) {
		return fmt.Errorf("first %p, last %p", r.first, r.last)
	}
	if r.first == nil && (r.head != 0 || r.tail != 0 || r.count != 0) {
		return fmt.Errorf("no chunk, but head %d, tail %d, count %d", r.head, r.tail, r.count)
	}
	if r.head < 0 || r.head > notificationChunkSize || r.tail < 0 || r.tail > notificationChunkSize {
		return fmt.Errorf("head %d or tail %d outside a chunk", r.head, r.tail)
	}
	if r.first != nil && r.first != r.last && r.tail == 0 {
		return fmt.Errorf("empty last chunk after the first")
	}
	live := 0
	for c := r.first; c != nil; c = c.next {
		if c.next == nil && c != r.last {
			return fmt.Errorf("last is not the end of the chunk list")
		}
		lo, hi := 0, notificationChunkSize
		if c == r.first {
			lo = r.head
		}
		if c == r.last {
			hi = r.tail
		}
		if lo > hi {
			return fmt.Errorf("head %d past tail %d", lo, hi)
		}
		live += hi - lo
		for i, n := range c.items {
			if (i < lo || i >= hi) && n != (notification{}) {
				return fmt.Errorf("unused slot %d still holds %+v", i, n)
			}
		}
	}
	if live != r.count {
		return fmt.Errorf("count %d, but %d notifications in the chunks", r.count, live)
	}
	for c := r.spares; c != nil; c = c.next {
		if c == r.first || c == r.last {
			return fmt.Errorf("a chunk in use is also a spare")
		}
		for i, n := range c.items {
			if n != (notification{}) {
				return fmt.Errorf("spare slot %d holds %+v", i, n)
			}
		}
	}
	return nil
}

func TestRingGrowing(t *testing.T) {
	var r ringGrowing
	_, ok := r.readOne()
	require.False(t, ok, "a new buffer is empty")
	require.Zero(t, r.chunks(), "a new buffer holds no chunk")

	// Across chunk edges: exactly one chunk, one more, then two and a bit.
	next, want := 0, 0
	write := func(k int) {
		for range k {
			r.writeOne(notification{newObj: next, tr: &notificationTrace{}})
			next++
		}
		require.NoError(t, r.checkInvariant())
	}
	read := func(k int) {
		for range k {
			n, ok := r.readOne()
			require.True(t, ok, "notification %d", want)
			require.Equal(t, want, n.newObj, "order is kept")
			want++
		}
		require.NoError(t, r.checkInvariant())
	}
	write(notificationChunkSize)
	require.Equal(t, 1, r.chunks(), "a full chunk needs no second one yet")
	write(1)
	require.Equal(t, 2, r.chunks())
	read(notificationChunkSize)
	require.Equal(t, 2, r.chunks(), "the used-up first chunk is kept as a spare")
	spare := r.spares
	require.NotNil(t, spare)
	// 1 queued + 515 = 516 from the front of the second chunk: three chunks,
	// the spare being the second of them.
	write(2*notificationChunkSize + 3)
	require.Equal(t, 3, r.chunks())
	require.Same(t, spare, r.first.next, "the spare is reused before a chunk is allocated")
	require.Nil(t, r.spares)
	read(r.len())
	_, ok = r.readOne()
	require.False(t, ok, "drained")
	require.Equal(t, 3, r.chunks(), "a drained buffer keeps the chunks of its largest backlog")
	require.Zero(t, r.head)
	require.Zero(t, r.tail)

	// Reuse after draining: the kept chunks are written again, from the
	// front, and nothing is allocated until the largest backlog is passed.
	write(3*notificationChunkSize - 1)
	require.Equal(t, 3, r.chunks())
	read(3*notificationChunkSize - 1)
	require.Equal(t, 3, r.chunks())
}

// TestRingGrowingMatchesASlice writes and reads a seeded random sequence,
// with bursts long enough to cross several chunks and drain to empty, and
// requires the same order as a plain slice used as a queue.
func TestRingGrowingMatchesASlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 11))
	var r ringGrowing
	var model []int
	next, maxInUse := 0, 0
	inUse := func() int {
		n := 0
		for c := r.first; c != nil; c = c.next {
			n++
		}
		return n
	}
	for step := range 2000 {
		if rng.IntN(2) == 0 {
			for range rng.IntN(3 * notificationChunkSize) {
				r.writeOne(notification{newObj: next})
				model = append(model, next)
				next++
			}
			// Writes only add chunks in use and reads only drop them, so
			// the most in use at once is seen at the end of a write burst.
			maxInUse = max(maxInUse, inUse())
		} else {
			for range rng.IntN(3 * notificationChunkSize) {
				n, ok := r.readOne()
				if len(model) == 0 {
					require.False(t, ok, "step %d: read from an empty buffer", step)
					break
				}
				require.True(t, ok, "step %d", step)
				require.Equal(t, model[0], n.newObj, "step %d", step)
				model = model[1:]
			}
		}
		require.Equal(t, len(model), r.len(), "step %d", step)
		require.NoError(t, r.checkInvariant(), "step %d", step)
		require.LessOrEqual(t, r.chunks(), maxInUse, "step %d: no more chunks than were ever in use at once", step)
	}
}

// syncedChecker is an upstream that has always synced.
type syncedChecker struct{}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (syncedChecker) Name() string          { return "synced" }
func (syncedChecker) Done() <-chan struct{} { return closedChan }
