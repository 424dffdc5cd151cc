package scalegen

import (
	"sync"
	"sync/atomic"
)

// Counter is an event handler for either library (cache.ResourceEventHandler)
// that only counts its calls, like internal/informerbench's, so that a
// benchmark measures the informer and not its handlers, and tells a waiter
// when the count reaches a number.
type Counter struct {
	adds, updates, deletes, total atomic.Int64

	mu     sync.Mutex
	target atomic.Int64
	reach  chan struct{} // closed when total reaches target; nil when none waits
}

// OnAdd counts an add.
func (c *Counter) OnAdd(any, bool) { c.adds.Add(1); c.tick() }

// OnUpdate counts an update.
func (c *Counter) OnUpdate(any, any) { c.updates.Add(1); c.tick() }

// OnDelete counts a delete.
func (c *Counter) OnDelete(any) { c.deletes.Add(1); c.tick() }

func (c *Counter) tick() {
	if n := c.total.Add(1); n == c.target.Load() {
		c.mu.Lock()
		if c.reach != nil && c.target.Load() == n {
			close(c.reach)
			c.reach = nil
		}
		c.mu.Unlock()
	}
}

// Counts is how many adds, updates and deletes c has counted.
func (c *Counter) Counts() (adds, updates, deletes int64) {
	return c.adds.Load(), c.updates.Load(), c.deletes.Load()
}

// Total is how many calls c has counted.
func (c *Counter) Total() int64 { return c.total.Load() }

// Reach returns a channel closed once c has counted total calls in all
// (at once if it already has). One wait at a time: a second Reach replaces
// the first, whose channel then never closes.
func (c *Counter) Reach(total int64) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan struct{})
	c.target.Store(total)
	if c.total.Load() >= total {
		close(ch)
		return ch
	}
	c.reach = ch
	return ch
}
