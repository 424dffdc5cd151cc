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
	const n = 3000 // more than initialBufferSize: the ring buffer must grow
	p := newSharedProcessor()
	slow := &counting{block: make(chan struct{})}
	fast := &counting{}
	tracer := noop.NewTracerProvider().Tracer("")
	for _, h := range []*counting{slow, fast} {
		p.addListener(newProcessListener(h, "h", 0, 0, time.Now(), func() bool { return true }, tracer, attribute.String("k", "v")))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.run(ctx) }()

	for i := range n {
		p.distribute(notification{kind: addKind, newObj: i}, false)
	}
	// All n were distributed while slow's first OnAdd is still blocked:
	// distribute never waited for it.
	until(t, "fast handler got everything", func() bool { return fast.len() == n })
	assert.Zero(t, slow.len())
	var maxPending int64
	p.listenersLock.RLock()
	for l := range p.listeners {
		maxPending = max(maxPending, l.pendingLength.Load())
	}
	p.listenersLock.RUnlock()
	assert.Greater(t, maxPending, int64(initialBufferSize), "the slow handler's buffer grew past its initial size")

	close(slow.block)
	until(t, "slow handler caught up", func() bool { return slow.len() == n })
	for i, v := range slow.got {
		require.Equal(t, i, v, "per-listener order is kept")
	}
	cancel()
	<-done
}

func TestRingGrowing(t *testing.T) {
	r := newRingGrowing(2)
	for i := range 5 {
		r.writeOne(notification{newObj: i})
	}
	_, _ = r.readOne()
	r.writeOne(notification{newObj: 5})
	var got []int
	for {
		n, ok := r.readOne()
		if !ok {
			break
		}
		got = append(got, n.newObj.(int))
	}
	assert.Equal(t, []int{1, 2, 3, 4, 5}, got)
}
