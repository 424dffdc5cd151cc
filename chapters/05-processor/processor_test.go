package processor

import (
	"context"
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

func isZeroNotification(n notification) bool { return n == notification{} }

// A listener's buffer keeps the chunks it empties, up to pendingSpares
// (newPending): across chunk edges, a drained buffer keeps the chunks of
// its largest backlog within that allowance, reuses them from the front,
// and allocates nothing more until that backlog is passed. The queue itself is internal/chunkq's, tested there.
func TestPendingKeepsTheChunksOfItsLargestBacklog(t *testing.T) {
	r := newPending()
	_, ok := r.Pop()
	require.False(t, ok, "a new buffer is empty")
	held := func() int { inUse, spare := r.Chunks(); return inUse + spare }
	require.Zero(t, held(), "a new buffer holds no chunk")

	next, want := 0, 0
	write := func(k int) {
		for range k {
			r.Push(notification{newObj: next, tr: &notificationTrace{}})
			next++
		}
		require.NoError(t, r.CheckInvariant(isZeroNotification))
	}
	read := func(k int) {
		for range k {
			n, ok := r.Pop()
			require.True(t, ok, "notification %d", want)
			require.Equal(t, want, n.newObj, "order is kept")
			want++
		}
		require.NoError(t, r.CheckInvariant(isZeroNotification))
	}
	write(notificationChunkSize)
	require.Equal(t, 1, held(), "a full chunk needs no second one yet")
	write(1)
	require.Equal(t, 2, held())
	read(notificationChunkSize)
	require.Equal(t, 2, held(), "the used-up first chunk is kept as a spare")
	write(2*notificationChunkSize + 3)
	require.Equal(t, 3, held(), "the spare is reused before a chunk is allocated")
	read(r.Len())
	_, ok = r.Pop()
	require.False(t, ok, "drained")
	require.Equal(t, 3, held(), "a drained buffer keeps the chunks of its largest backlog")

	write(3*notificationChunkSize - 1)
	require.Equal(t, 3, held(), "written again from the front, nothing allocated")
	read(3*notificationChunkSize - 1)
	require.Equal(t, 3, held())

	// A backlog past the spares' allowance: drained, the buffer keeps its
	// one chunk in use and pendingSpares spares, not every chunk it had.
	write((pendingSpares + 10) * notificationChunkSize)
	require.Equal(t, pendingSpares+10, held())
	read(r.Len())
	require.Equal(t, 1+pendingSpares, held(), "a drained buffer keeps at most pendingSpares spare chunks")
}

// syncedChecker is an upstream that has always synced.
type syncedChecker struct{}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (syncedChecker) Name() string          { return "synced" }
func (syncedChecker) Done() <-chan struct{} { return closedChan }
