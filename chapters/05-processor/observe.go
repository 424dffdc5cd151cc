package processor

import (
	"fmt"
	"time"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/internal/monoclock"
)

// Observer is told what the informer's metrics need: how long each process
// call of the queue's consumer and each handler call takes, the queue's
// length, and how many notifications wait for each handler. Package dropin
// turns it into client-go's informer metrics (through client-go's
// InformerMetricsProvider) and our per-handler pair. Every func may be nil.
//
// Ours: client-go times the process call and sets the queue's length
// inside the RealFIFO (the_real_fifo.go, whileProcessing_locked and every
// change of f.items) and reports them to an InformerMetricsProvider; it
// times no handler call and counts no handler's backlog.
type Observer struct {
	// Processed is told the duration of each process call: HandleDeltas for
	// one pop, or one batch of the RealFIFO's batch pops. Enabled, if set,
	// is asked first: false skips the clock reads, so an informer whose
	// metrics are off pays one call per pop.
	Processed func(time.Duration)
	Enabled   func() bool
	// Handler is asked once per listener, with its name (informer.listener),
	// for the func told the duration of each of its handler calls (nil:
	// none). HandlerEnabled, if set, is asked before each call: false skips
	// the clock reads, unless [ReadStats] has been called on the informer
	// (the call is then timed for it, and the func told as well). It is a
	// switch of its own, not Enabled: the process call's metrics (client-
	// go's) and the handlers' (ours) are published under different rules,
	// and an informer without the first may well have the second.
	Handler        func(listener string) func(time.Duration)
	HandlerEnabled func() bool
	// Pending is asked once per listener, with its name, for the func told
	// the number of notifications waiting for its handler (in addCh and in
	// its buffer) each time a notification is added for it or taken by its
	// handler (nil: none).
	Pending func(listener string) func(int)
	// PendingRead, if set, is asked once per listener before Pending, with
	// its name and a func that reads its backlog now (safe from any
	// goroutine). Returning true means the observer reads the backlog
	// itself when it wants it (a gauge read when scraped), and the
	// listener then tells Pending nothing, so that its notifications pay
	// nothing for the metric: two gauge writes per handler and event were
	// about 5% of an event's CPU with four handlers that do nothing
	// (docs/performance.md).
	PendingRead func(listener string, backlog func() int) bool
	// QueuedItems is asked once, when Run builds the RealFIFO, for the
	// func the queue tells its length at every change
	// (deltafifo.RealFIFOOptions.QueuedItems; nil: none), as client-go's
	// informer makes its FIFO's metrics when Run builds the FIFO
	// (newQueueFIFO, controller.go). The DeltaFIFO is not told.
	QueuedItems func() func(int)
	// Stored, if set, is told every change HandleDeltas has written to
	// the cache, before the handlers hear of it: old is the object the
	// cache held under the key before (nil: none), new the one it holds
	// now (nil: deleted). A resync, and a relisted object the reflector
	// exchanged for the cached one (chapter 3's ReusingStore), are told
	// with old == new. It is called under the lock that keeps every other
	// change out (blockDeltas), on the queue's one consumer goroutine, so
	// what it is told, in order, adds up to the cache; [ReadCache] reads
	// the cache under the same lock, so a running total started from
	// ReadCache's answer misses no change and counts none twice. Package
	// dropin keeps the live view's byte estimate with it. It must be
	// quick: the next change waits for it.
	Stored func(old, new any)
}

// tellStored tells the observer's Stored the change notify is about to
// hand out (d written, old the object it replaced).
func (s *sharedIndexInformer) tellStored(d deltafifo.Delta, old any) {
	if s.observer.Stored == nil {
		return
	}
	if d.Type == deltafifo.Deleted {
		if old != nil {
			s.observer.Stored(old, nil)
		}
		return
	}
	s.observer.Stored(old, d.Object)
}

// ReadCache calls f with every object informer's cache holds, while no
// change can be written to it (the lock HandleDeltas holds, as
// AddEventHandler holds it to list the cache for a late handler's adds),
// and tells f nothing else meanwhile: every change after it is one
// Observer.Stored is told. informer must have been made by this package.
// f must not call back into the informer.
//
// Ours: client-go has no such accessor.
func ReadCache(informer SharedInformer, f func(objs []any)) error {
	s, ok := informer.(*sharedIndexInformer)
	if !ok {
		return fmt.Errorf("ReadCache: %T is not an informer of this package", informer)
	}
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	f(s.indexer.List())
	return nil
}

// timedProcess wraps the Process function with the observer's clock (the
// monotonic one alone: internal/monoclock).
func (s *sharedIndexInformer) timedProcess(process deltafifo.ProcessFunc) deltafifo.ProcessFunc {
	o := s.observer
	if o.Processed == nil {
		return process
	}
	return func(obj any, isInInitialList bool) error {
		if o.Enabled != nil && !o.Enabled() {
			return process(obj, isInInitialList)
		}
		start := monoclock.Now()
		err := process(obj, isInInitialList)
		o.Processed(monoclock.Since(start))
		return err
	}
}

// timedBatch is timedProcess for the RealFIFO's ProcessBatch.
func (s *sharedIndexInformer) timedBatch(process deltafifo.ProcessBatchFunc) deltafifo.ProcessBatchFunc {
	o := s.observer
	if o.Processed == nil {
		return process
	}
	return func(deltas []deltafifo.Delta, isInInitialList bool) error {
		if o.Enabled != nil && !o.Enabled() {
			return process(deltas, isInInitialList)
		}
		start := monoclock.Now()
		err := process(deltas, isInInitialList)
		o.Processed(monoclock.Since(start))
		return err
	}
}

// handlerObserver is what a new listener's counts also tell.
func (s *sharedIndexInformer) handlerObserver(listener string) func(time.Duration) {
	if s.observer.Handler == nil {
		return nil
	}
	return s.observer.Handler(listener)
}

// pendingObserver is what listener l tells its backlog: nothing if the
// observer reads it itself (PendingRead).
func (s *sharedIndexInformer) pendingObserver(l *processorListener) func(int) {
	if s.observer.PendingRead != nil && s.observer.PendingRead(l.name, l.backlog) {
		return nil
	}
	if s.observer.Pending == nil {
		return nil
	}
	return s.observer.Pending(l.name)
}

// queuedItemsObserver is what the RealFIFO Run builds tells its length.
func (s *sharedIndexInformer) queuedItemsObserver() func(int) {
	if s.observer.QueuedItems == nil {
		return nil
	}
	return s.observer.QueuedItems()
}

// HandlerName is the listener's name (the contract's informer.listener:
// the handler's type or function, "#" and its index), which a registration
// answers so that the caller can tell its observers which handler went.
// Ours.
func (p *processorListener) HandlerName() string { return p.name }

// tellPending tells the listener's observer its backlog now: what waits in
// addCh and in the ring buffer. Read without a lock, each part atomically:
// a notification on its way from addCh to the buffer may be missed for a
// moment, which the next change corrects.
func (p *processorListener) tellPending() {
	if p.pendingObs != nil {
		p.pendingObs(p.backlog())
	}
}

// backlog is what waits for the handler now, read as tellPending reads it.
func (p *processorListener) backlog() int { return len(p.addCh) + int(p.pendingLength.Load()) }
