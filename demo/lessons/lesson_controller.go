package lessons

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/demo/result"
	"github.com/informer-anatomy/informer-anatomy/demo/terminal"
	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

// The controller lesson (opt-in: --scenario controller; not part of
// "all", so the other lessons' listener names and counts stay as their
// texts and the workshop give them): a small controller on the informer,
// as chapter 7 (docs/07-your-controller.md) describes: a handler that puts
// the keys of labelled pods on a traced workqueue
// (dropin.NewTracedRateLimitingQueueWithConfig), one worker whose reconcile takes controllerDelay. A
// pod is created, then updated five times while its first reconcile runs:
// the trace goes on from OnAdd through workqueue.add, .queued and .process,
// and the burst shows the workqueue merging adds.

const (
	controllerLabel = "demo.informer-anatomy.io/controller"
	controllerDelay = 200 * time.Millisecond
	controllerPod   = "ctl"
	// controllerUpdates is the burst's size.
	controllerUpdates = 5
)

func init() {
	register(Lesson{
		Name:  "controller",
		Order: 90,
		OptIn: true,
		Text: func(*Env) string {
			return fmt.Sprintf("a controller (handler → traced workqueue → a worker, %v a reconcile) on the informer; demo/%s is created, then updated %d times while its first reconcile runs.",
				controllerDelay, controllerPod, controllerUpdates)
		},
		LookFor: "  Look for: the create's trace goes on past the handler: OnAdd → workqueue.add → workqueue.queued →\n" +
			"  workqueue.process (the reconcile). Of the burst, the first update's add waits (the key is being\n" +
			"  processed: it is queued again at Done); the others find it waiting and merge: their workqueue.add has\n" +
			"  workqueue.coalesced=true and ends their trace, and the second workqueue.process links to each of them.",
		Run: controllerLesson,
	})
}

// demoController is the lesson's controller.
type demoController struct {
	queue *dropin.TracedQueue[string]
	done  chan struct{}
	// hold, while set, is a channel a reconcile waits on, after its
	// controllerDelay, until the lesson closes it: the create's reconcile
	// lasts until the burst's adds have reached the queue. Without it, on
	// a loaded machine (CI, its three lanes on 2 cores) the five updates
	// took longer than a 200 ms reconcile to arrive, the later ones found
	// the key's second reconcile already running, and the lesson showed 3
	// reconciles where it teaches 2.
	hold atomic.Pointer[chan struct{}]

	mu         sync.Mutex
	reconciles map[string]int // guarded by mu
}

// controllerHandler enqueues the keys of labelled pods. A pointer, so its
// listener is "*lessons.controllerHandler#N".
type controllerHandler struct {
	// HandlerCallLink: the informer tells each call its span, so that
	// the queue's add is its child (the span contract's "After the
	// handler"); a handler given to dropin's informer is linked by its
	// adapter, this one is given to chapter 5's directly.
	dropin.HandlerCallLink
	q workqueue.TypedRateLimitingInterface[string]
}

func (h *controllerHandler) enqueue(obj any) {
	if t, ok := obj.(deltafifo.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok || p.Labels[controllerLabel] != "true" {
		return
	}
	if key, err := store.MetaNamespaceKeyFunc(p); err == nil {
		h.q.Add(key)
	}
}

func (h *controllerHandler) OnAdd(obj any, _ bool)  { h.enqueue(obj) }
func (h *controllerHandler) OnUpdate(_, newObj any) { h.enqueue(newObj) }
func (h *controllerHandler) OnDelete(obj any)       { h.enqueue(obj) }
func (c *demoController) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reconciles[key]
}
func (c *demoController) stats() dropin.QueueStats { return c.queue.Stats() }

// settled returns a condition that holds once the controller has been idle
// (nothing queued, nothing processing, and also want) with unchanged counts
// for half a reconcile's time. One look is not enough: the traced queue
// reads inner's Len apart from its own counters and calls inner outside its
// lock, so a key between a Done and inner's re-queue of it, or between
// inner's Get and the count of it, looks idle for an instant. Taken for
// idle there, the lesson counted one reconcile where there were two (CI,
// under load); half a reconcile later the next one shows as processing.
func (c *demoController) settled(want func(dropin.QueueStats) bool) func() bool {
	return settledFor(c.stats, controllerDelay/2, want)
}

// settledFor is settled's condition on any source of stats: it holds once
// stats has looked idle (and want) with the same Adds and Processed for
// hold.
func settledFor(stats func() dropin.QueueStats, hold time.Duration, want func(dropin.QueueStats) bool) func() bool {
	var since time.Time
	var seen dropin.QueueStats
	return func() bool {
		st := stats()
		if st.Depth != 0 || st.Processing != 0 || !want(st) {
			since = time.Time{}
			return false
		}
		if since.IsZero() || st.Adds != seen.Adds || st.Processed != seen.Processed {
			since, seen = time.Now(), st
			return false
		}
		return time.Since(since) >= hold
	}
}
func (c *demoController) stop() { c.queue.ShutDown(); <-c.done }

// startController adds the lesson's handler to the informer and starts its
// worker; e.shutdown stops it.
func (e *Env) startController() error {
	q := dropin.NewTracedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](), workqueue.TypedRateLimitingQueueConfig[string]{Name: "demo-controller"})
	tq := q.(*dropin.TracedQueue[string])
	tq.SetTracerProvider(e.tp)
	c := &demoController{queue: tq, done: make(chan struct{}), reconciles: map[string]int{}}
	if _, err := e.informer.AddEventHandlerWithResyncPeriod(&controllerHandler{q: q}, 0); err != nil {
		return err
	}
	go func() {
		defer close(c.done)
		for {
			key, shutdown := q.Get()
			if shutdown {
				return
			}
			time.Sleep(controllerDelay) // the reconcile
			if h := c.hold.Load(); h != nil {
				<-*h
			}
			c.mu.Lock()
			c.reconciles[key]++
			c.mu.Unlock()
			q.Forget(key)
			q.Done(key)
		}
	}()
	e.controller.Store(c)
	return nil
}

func controllerLesson(e *Env) (Outcome, error) {
	if e.controller.Load() == nil {
		if err := e.startController(); err != nil {
			return Outcome{}, err
		}
	}
	c := e.controller.Load()
	key := Namespace + "/" + controllerPod
	// An earlier run's demo/ctl is deleted first, and its DELETE reaches
	// the handler as one more add of the key: the lesson waits for that
	// add before it counts, or it is counted with the burst's (7 adds, not
	// 6) and the lesson waited out its step timeout on every run but the
	// first (the page's "run a controller" answered 500 after 20 s).
	beforeDelete := c.stats()
	err := e.srv.Delete(apiserver.Pods, Namespace, controllerPod)
	switch {
	case err == nil:
		if err := e.until("the delete of the last run's demo/"+controllerPod+" to reach the controller", func() bool { return c.stats().Adds > beforeDelete.Adds }); err != nil {
			return Outcome{}, err
		}
	case !apierrors.IsNotFound(err):
		return Outcome{}, err
	}
	if err := e.until("the controller to be idle", c.settled(func(dropin.QueueStats) bool { return true })); err != nil {
		return Outcome{}, err
	}
	before, reconciledBefore := c.stats(), c.count(key)
	hold := make(chan struct{})
	c.hold.Store(&hold)
	released := false
	release := func() {
		if !released {
			released = true
			c.hold.Store(nil)
			close(hold)
		}
	}
	defer release() // on every way out, or the worker waits for good
	if _, err := e.srv.Create(e.pod(controllerPod, map[string]string{controllerLabel: "true"})); err != nil {
		return Outcome{}, err
	}
	if err := e.until("the create's reconcile to begin", func() bool { return c.stats().Processing == 1 }); err != nil {
		return Outcome{}, err
	}
	for v := range controllerUpdates {
		if err := e.UpdatePod(controllerPod, fmt.Sprint(v+1)); err != nil {
			return Outcome{}, err
		}
	}
	if err := e.until("the burst's adds to reach the queue", func() bool { return c.stats().Adds-before.Adds == controllerUpdates+1 }); err != nil {
		return Outcome{}, err
	}
	release()
	if err := e.until("the burst's reconciles to end", c.settled(func(st dropin.QueueStats) bool {
		return st.Adds-before.Adds == controllerUpdates+1
	})); err != nil {
		return Outcome{}, err
	}
	after := c.stats()
	out := Outcome{Line: fmt.Sprintf("controller: demo/%s: 1 create and %d quick updates made %d adds and %s; the workqueue merged %d adds into a wait already there (workqueue.add coalesced=true); a reconcile took %v",
		controllerPod, controllerUpdates, after.Adds-before.Adds, terminal.Plural(c.count(key)-reconciledBefore, "reconcile"), after.Merged-before.Merged, terminal.Ms(after.ProcessLast))}
	out.Show = []result.Showcase{
		result.Show("a controller's reconcile: the create, from the watch to workqueue.process", key, result.RootIs("ListAndWatch watch", "ADDED")),
		result.Show("the first update of the burst: its add waits while the key is processed", key, result.RootIs("ListAndWatch watch", "MODIFIED")),
	}
	return out, nil
}

// ControllerListener is the prefix of the controller lesson's listener's
// name.
const ControllerListener = "*lessons.controllerHandler#"

// ControllerStats are the controller lesson's workqueue's counters; false
// until the lesson has run.
func (e *Env) ControllerStats() (dropin.QueueStats, bool) {
	c := e.controller.Load()
	if c == nil {
		return dropin.QueueStats{}, false
	}
	return c.stats(), true
}
