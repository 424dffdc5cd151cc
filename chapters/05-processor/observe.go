package processor

import (
	"time"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
)

// Observer is told how long the informer's work takes, for metrics: each
// process call of the queue's consumer, and each handler call. Package
// dropin turns it into client-go's informer_processing_latency_seconds and
// our per-handler latency (internal/metrics). Both funcs may be nil.
//
// Ours: client-go times the process call inside the RealFIFO
// (the_real_fifo.go, whileProcessing_locked) and reports it to an
// InformerMetricsProvider; it times no handler call.
type Observer struct {
	// Processed is told the duration of each process call: HandleDeltas for
	// one pop, or one batch of the RealFIFO's batch pops. Enabled, if set,
	// is asked first: false skips the clock reads, so an informer whose
	// metrics are off pays one call per pop.
	Processed func(time.Duration)
	Enabled   func() bool
	// Handler is asked once per listener, with its name (informer.listener),
	// for the func told the duration of each of its handler calls (nil:
	// none). Enabled, if set, is asked before each call too: false skips
	// the clock reads, unless [ReadStats] has been called on the informer
	// (the call is then timed for it, and the func told as well).
	Handler func(listener string) func(time.Duration)
}

// timedProcess wraps the Process function with the observer's clock.
func (s *sharedIndexInformer) timedProcess(process deltafifo.ProcessFunc) deltafifo.ProcessFunc {
	o := s.observer
	if o.Processed == nil {
		return process
	}
	return func(obj any, isInInitialList bool) error {
		if o.Enabled != nil && !o.Enabled() {
			return process(obj, isInInitialList)
		}
		start := time.Now()
		err := process(obj, isInInitialList)
		o.Processed(time.Since(start))
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
		start := time.Now()
		err := process(deltas, isInInitialList)
		o.Processed(time.Since(start))
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
