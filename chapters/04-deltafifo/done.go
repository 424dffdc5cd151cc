package deltafifo

import (
	"context"
	"slices"
	"sync"

	"k8s.io/klog/v2"
)

// DoneChecker names something a caller can wait for without polling: its
// Done channel is closed when the thing has happened. HasSynced answers
// "now?"; a DoneChecker lets a waiter sleep until the answer changes, which
// under testing/synctest also means a wait takes no fake time at all.
//
// Mirrors [k8s.io/client-go/tools/cache.DoneChecker] (shared_informer.go).
type DoneChecker interface {
	// Name says what is waited for, in log lines; it may be built on each
	// call, so keep it off hot paths.
	Name() string
	// Done is closed once the thing has happened, and stays closed.
	Done() <-chan struct{}
}

// IsDone reports, without blocking, whether checker's Done is closed.
//
// Mirrors [k8s.io/client-go/tools/cache.IsDone] (shared_informer.go).
func IsDone(checker DoneChecker) bool {
	select {
	case <-checker.Done():
		return true
	default:
		return false
	}
}

// WaitFor blocks until every checker is done (true) or ctx is done
// (false, unless every checker turned out to be done as well). With what
// set, it logs through ctx's logger (klog.FromContext) that it is waiting,
// each checker as it finishes, and the names of those that did not.
//
// One goroutine per checker waits on its channel, so each "Done waiting"
// line is logged when that checker finished, not when the slowest did; the
// lines are logged here, by the caller's goroutine, not by those: a log
// line's source location is found by walking up the logging goroutine's
// stack, and a waiter's stack does not lead back to the caller.
//
// The lines name the caller's file and line, not this function's: the
// logger is given one more frame to skip (logr's WithCallStackHelper), as
// upstream does, so a log says which wait of which controller it was.
//
// Mirrors [k8s.io/client-go/tools/cache.WaitFor] (shared_informer.go).
func WaitFor(ctx context.Context, what string, checkers ...DoneChecker) bool {
	logger := klog.FromContext(ctx)
	if what != "" {
		var helper func()
		helper, logger = logger.WithCallStackHelper()
		helper()
		logger.Info("Waiting", "for", what)
	}
	type result struct {
		checker DoneChecker
		done    bool
	}
	results := make(chan result)
	var wg sync.WaitGroup
	for _, c := range checkers {
		wg.Go(func() {
			select {
			case <-c.Done():
				results <- result{c, true}
			case <-ctx.Done():
				// Both may be ready and select picks at random: a checker
				// that is done counts as done even when ctx ended too.
				results <- result{c, IsDone(c)}
			}
		})
	}
	var missing []string
	for range checkers {
		r := <-results
		switch {
		case !r.done:
			missing = append(missing, r.checker.Name())
		case what != "":
			logger.Info("Done waiting", "for", what, "instance", r.checker.Name())
		}
	}
	wg.Wait()
	if what != "" && len(missing) > 0 {
		slices.Sort(missing)
		logger.Info("Timed out waiting", "for", what, "cause", context.Cause(ctx), "instances", missing)
	}
	return len(missing) == 0
}

// queueChecker is the DoneChecker of a queue's HasSynced.
type queueChecker struct {
	name string
	done chan struct{}
}

func (c queueChecker) Name() string          { return c.name }
func (c queueChecker) Done() <-chan struct{} { return c.done }
