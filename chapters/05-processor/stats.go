package processor

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
)

// Stats: a read-only snapshot of a running informer's own counters, for a
// live view. Ours: client-go has no such accessor; its informers report
// queue depth and handler latency only through metrics providers
// (the_real_fifo.go, delta_fifo.go) and nothing per listener. The numbers
// come from the informer's state, not from spans, so they count every
// object whether or not it is traced.

// InformerStats is one snapshot of an informer; see [ReadStats].
type InformerStats struct {
	// Queue is the queue the informer runs on.
	Queue QueueKind
	// Started: Run has built the queue; before that QueueLen is 0.
	Started bool
	// QueueLen is the queue's depth: keys on a DeltaFIFO, entries on a
	// RealFIFO (an atomic relist is one entry).
	QueueLen int
	// Distributed is how many changes HandleDeltas has applied to the cache
	// and handed to distribute (a late handler's synthetic adds are not
	// among them: they bypass HandleDeltas).
	Distributed uint64
	// Cached is the number of objects in the indexer.
	Cached int
	// LastSyncResourceVersion is the reflector's.
	LastSyncResourceVersion string
	// Listeners, in the order they were added.
	Listeners []ListenerStats
}

// ListenerStats is one listener's part of [InformerStats].
type ListenerStats struct {
	// Name is the contract's informer.listener (handler type + index).
	Name string
	// AddCh is how many notifications wait in addCh for pop to take them.
	AddCh int
	// Pending is the ring buffer's length: notifications pop holds
	// because the handler has not taken the previous ones yet.
	Pending int
	// Calls is how many handler calls have ended (returned or panicked).
	Calls uint64
	// TimedCalls is how many of them were timed: a call is timed only
	// while something reads the times, from the informer's first
	// ReadStats on or while its Observer is enabled (the clock reads are
	// not paid before). HandlerTime is their total duration,
	// MaxHandlerTime the longest.
	TimedCalls                  uint64
	HandlerTime, MaxHandlerTime time.Duration
	// Synced is the registration's HasSynced: the informer has synced and
	// every initial-list add to this handler has returned.
	Synced bool
}

// MeanHandlerTime is HandlerTime / TimedCalls, 0 before the first timed
// call.
func (l ListenerStats) MeanHandlerTime() time.Duration {
	if l.TimedCalls == 0 {
		return 0
	}
	return l.HandlerTime / time.Duration(l.TimedCalls)
}

// ReadStats returns a snapshot of informer, which must have been made by
// this package. Each number is read atomically on its own; the snapshot as
// a whole is not one instant (a reader polling it sees them converge).
//
// The stages are read from the last to the first: the listeners, then
// distribute's count, the cache and the queue. Read the other way round, a
// burst handled between the first read and the last showed handlers that
// had made more calls than distribute had handed out, and an empty cache
// behind them. Read this way, a snapshot never shows a listener's calls
// ahead of Distributed (a late handler's synthetic adds aside, which do not
// pass through distribute).
func ReadStats(informer SharedInformer) (InformerStats, error) {
	s, ok := informer.(*sharedIndexInformer)
	if !ok {
		return InformerStats{}, fmt.Errorf("ReadStats: %T is not an informer of this package", informer)
	}
	// From now on every handler call is timed (handlerCounts).
	if !s.processor.timed.Load() {
		s.processor.timed.Store(true)
	}
	st := InformerStats{Queue: s.queueKind, Listeners: s.processor.stats()}
	st.Distributed = s.processor.distributed.Load()
	// Chapter 1's cache counts itself without listing its keys; an indexer
	// from elsewhere is counted the long way.
	if l, ok := s.indexer.(interface{ Len() int }); ok {
		st.Cached = l.Len()
	} else {
		st.Cached = len(s.indexer.ListKeys())
	}
	s.startedLock.Lock()
	q, c := s.queue, s.controller
	s.startedLock.Unlock()
	switch q := q.(type) {
	case *deltafifo.RealFIFO:
		st.QueueLen, st.Started = q.Len(), true
	case *deltafifo.DeltaFIFO:
		st.QueueLen, st.Started = q.Len(), true
	}
	if c != nil {
		st.LastSyncResourceVersion = c.LastSyncResourceVersion()
	}
	return st, nil
}

func (p *sharedProcessor) stats() []ListenerStats {
	p.listenersLock.RLock()
	out := make([]ListenerStats, 0, len(p.listeners))
	for l := range p.listeners {
		timed := l.counts.timedCalls.Load()
		out = append(out, ListenerStats{
			Name:           l.name,
			AddCh:          len(l.addCh),
			Pending:        int(l.pendingLength.Load()),
			TimedCalls:     timed,
			Calls:          timed + l.counts.untimedCalls.Load(),
			HandlerTime:    time.Duration(l.counts.total.Load()),
			MaxHandlerTime: time.Duration(l.counts.max.Load()),
			Synced:         l.syncedFlag.Load(), // not HasSynced: see syncedFlag
		})
	}
	p.listenersLock.RUnlock()
	slices.SortFunc(out, func(a, b ListenerStats) int { return cmp.Compare(listenerIndex(a.Name), listenerIndex(b.Name)) })
	return out
}

// listenerIndex is the number after the last '#' of a listener's name.
func listenerIndex(name string) int {
	n, _ := strconv.Atoi(name[strings.LastIndexByte(name, '#')+1:])
	return n
}

// handlerCounts is a listener's call count and times, written only by its
// run goroutine and read by ReadStats.
//
// A call is timed (two clock reads, one while run hands off from a call to
// the next: see run) only while something reads the times:
// from the informer's first ReadStats on, or while its Observer is
// enabled. Until then a call costs one atomic add here, as with no stats
// at all but for the count.
//
// The calls are counted in two parts, each by one atomic add per call:
// a timed call adds to timedCalls, the others to untimedCalls, and Calls
// is their sum (read timed part first: both only grow, so the sum is never
// below TimedCalls). One total as well would be a third add per timed
// call, on the path issue 37 holds to 5% with metrics on.
type handlerCounts struct {
	untimedCalls, timedCalls atomic.Uint64
	total, max               atomic.Int64 // nanoseconds, of the timed calls
	// observe, if set (SharedIndexInformerOptions.Observer), is told each
	// timed call's duration too; enabled is the Observer's Enabled (nil:
	// always).
	observe func(time.Duration)
	enabled func() bool
	// read is the informer's: set for good by its first ReadStats.
	read *atomic.Bool
}

// timing says whether the next call is to be timed.
func (c *handlerCounts) timing() bool {
	return (c.read != nil && c.read.Load()) || (c.observe != nil && (c.enabled == nil || c.enabled()))
}

// count records a call that was not timed.
func (c *handlerCounts) count() { c.untimedCalls.Add(1) }

// record records a timed call of duration d.
func (c *handlerCounts) record(d time.Duration) {
	c.timedCalls.Add(1)
	c.total.Add(int64(d))
	if int64(d) > c.max.Load() { // one writer: no lost maximum
		c.max.Store(int64(d))
	}
	if c.observe != nil {
		c.observe(d)
	}
}
