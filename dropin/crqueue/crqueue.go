// Package crqueue traces controller-runtime's priority queue
// (sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue), the queue
// a controller-runtime v0.25 controller reads by default, as dropin's
// NewTracedQueue traces client-go's workqueues: workqueue.add, .delayed,
// .queued and .process, as docs/span-contract.md's "After the handler"
// says.
//
// dropin.NewTracedQueue takes a priority queue too, but only as the
// rate-limiting queue it also is: behind it controller-runtime no longer
// sees a priority queue, its handlers add with plain Add, and the initial
// list and resyncs are no longer put behind live changes. The queue
// [NewTracedPriorityQueue] returns is a priorityqueue.PriorityQueue: it
// keeps AddWithOpts and GetWithPriority, so controller-runtime's handlers
// and workers use it as they use the bare one.
//
//	ctrl.NewControllerManagedBy(mgr).
//		For(&corev1.ConfigMap{}).
//		WithOptions(controller.Options{NewQueue: crqueue.NewQueue[reconcile.Request]}).
//		Complete(r)
//
// This is a module of its own (go.mod beside this file, with a replace of
// the main module), so that controller-runtime stays out of the main
// module's dependency graph.
package crqueue

import (
	"time"

	"go.opentelemetry.io/otel/trace"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/queuetrace"
)

const tracerName = "github.com/informer-anatomy/informer-anatomy/dropin/crqueue"

var _ priorityqueue.PriorityQueue[string] = (*TracedPriorityQueue[string])(nil)

// NewQueue has the signature of controller.Options.NewQueue and returns
// what controller-runtime makes when NewQueue is not set and
// UsePriorityQueue is left at its default, true (pkg/controller/
// controller.go, NewTypedUnmanaged): priorityqueue.New with the
// controller's name and rate limiter, here behind
// [NewTracedPriorityQueue]. Differs: controller-runtime also hands the
// queue the controller's logger (priorityqueue.Opts.Log), which NewQueue's
// signature does not carry; the queue logs its items at V(5) only. Its
// metrics are controller-runtime's: the priority queue is given no
// MetricProvider, so it takes controller-runtime's own (the workqueue_*
// series on controller-runtime's metrics.Registry, labelled name,
// controller and, on workqueue_depth, priority), exactly as without
// dropin; the wrapper reports nothing of its own.
//
// Ours: controller-runtime's default NewQueue is a closure, not exported.
//
// The wrapper is handed rateLimiter, the very limiter the priority queue
// is built with, as dropin.NewTracedRateLimitingQueueWithConfig hands its
// wrapper client-go's: it knows the delay of every rate-limited add
// ([TracedPriorityQueue.AddWithOpts] says how). A nil rateLimiter leaves
// the priority queue to pick its default, which the wrapper cannot see:
// its rate-limited delays are then guessed, as behind
// [NewTracedPriorityQueue].
func NewQueue[T comparable](controllerName string, rateLimiter workqueue.TypedRateLimiter[T]) workqueue.TypedRateLimitingInterface[T] {
	return newTracedPriorityQueue(controllerName, priorityqueue.New(controllerName, func(o *priorityqueue.Opts[T]) {
		o.RateLimiter = rateLimiter
	}), rateLimiter)
}

// NewTracedPriorityQueue wraps inner, a controller-runtime priority queue,
// so that the trace of an object goes on from the handler that added its
// key to the worker that reconciled it. Every call is forwarded to inner
// as it was made, AddWithOpts with its priority, which alone decides what
// GetWithPriority returns and when; the wrapper only watches. (Behind
// [NewQueue], which hands the wrapper inner's rate limiter, a rate-limited
// add reaches inner as what inner would make of it: see
// [TracedPriorityQueue.AddWithOpts].)
//
// It traces with the global TracerProvider unless
// [TracedPriorityQueue.SetTracerProvider] says otherwise.
//
// It reports no metrics of its own: inner reports its workqueue_* metrics
// through the MetricProvider it was given (controller-runtime's by
// default, on its metrics.Registry, with the controller and priority
// labels), as it would unwrapped.
//
// With no tracing and nothing reading its Stats, it asks whether either is
// there and forwards, nothing more.
//
// It shows in the live view of the process (dropin.LiveViewHandler) under
// name until it is shut down.
//
// The wrapper is not told inner's rate limiter, so it cannot know the
// delay of a rate-limited add: it forwards the add as it was made and
// guesses (see [TracedPriorityQueue]). [NewQueue] builds the priority
// queue itself and hands the wrapper its limiter, and the delays are
// known.
//
// Ours: controller-runtime's priority queue does not trace.
func NewTracedPriorityQueue[T comparable](name string, inner priorityqueue.PriorityQueue[T]) priorityqueue.PriorityQueue[T] {
	return newTracedPriorityQueue(name, inner, nil)
}

// newTracedPriorityQueue wraps inner under name; limiter is the rate
// limiter inner was built with (nil: unknown, rate-limited adds are
// forwarded as they were made and their delay guessed). A limiter that is
// not inner's would be asked in inner's place: the delays, Forget and
// NumRequeues would part ways.
func newTracedPriorityQueue[T comparable](name string, inner priorityqueue.PriorityQueue[T], limiter workqueue.TypedRateLimiter[T]) priorityqueue.PriorityQueue[T] {
	return dropin.ShowInLiveView(&TracedPriorityQueue[T]{
		t: queuetrace.New(queuetrace.Config[T]{
			Name: name, TracerName: tracerName, Inner: inner, NumRequeues: inner.NumRequeues,
			Semantics: queuetrace.PriorityQueue,
		}),
		inner:   inner,
		limiter: limiter,
	}, name, "priority")
}

// TracedPriorityQueue is what [NewTracedPriorityQueue] returns: reach it
// with a type assertion for SetTracerProvider and Stats.
//
// How it knows what the queue did. The priority queue (priorityqueue.go,
// lockedAddWithOpts) keeps one item per key, ready or waiting for its
// delay: an add of a key it holds is merged into that item, which keeps the
// higher priority and the earlier ready time; an immediate add of a
// waiting item makes it ready now; a delayed add of a ready item changes
// nothing but its priority. A key added while it is processing is a new
// item, held back until Done. The wrapper keeps that bookkeeping per key
// from the moment something reads it: tracing on, or a
// Stats call (the live view's poll is one) (dropin.TracedQueue says how,
// for client-go's queue, whose delayed entries live apart from the ready
// keys).
//
// Where the wrapper cannot see what inner did, it approximates as
// dropin.TracedQueue does: unless the wrapper knows inner's rate limiter
// ([NewQueue]; see [TracedPriorityQueue.AddWithOpts]), a rate-limited
// add's delay is the rate limiter's, unseen (its workqueue.delayed lasts
// until the first Get of the key that nothing else explains; an immediate
// add in between is taken as making it ready then); an add racing with the Get that takes the same
// key can be taken as merged; ready times are read from time.Now.
// Priorities change the order of Gets, not the chains: an add that raises a
// waiting key's priority is merged like any other. Each workqueue.add says
// the priority it asked for (workqueue.priority: 0 for Add, AddAfter and
// AddRateLimited), and a process span from GetWithPriority the one it was
// served at.
type TracedPriorityQueue[T comparable] struct {
	t     *queuetrace.Tracer[T]
	inner priorityqueue.PriorityQueue[T]
	// limiter is inner's rate limiter when it is known (the one NewQueue
	// built inner with), else nil.
	limiter workqueue.TypedRateLimiter[T]
}

// SetTracerProvider sets the provider of the queue's spans; nil: the global
// one. Call it before the queue is used.
func (q *TracedPriorityQueue[T]) SetTracerProvider(tp trace.TracerProvider) {
	q.t.SetTracerProvider(tp)
}

// Stats reads the queue's counters, as dropin.TracedQueue's Stats does.
// Depth is inner's Len: ready keys, those held back until their Done
// included. Retries counts rate-limited adds (AddRateLimited, and each
// item of an AddWithOpts with RateLimited); Longest is computed at the
// call.
func (q *TracedPriorityQueue[T]) Stats() dropin.QueueStats { return dropin.QueueStats(q.t.Stats()) }

// AddWithOpts adds items with o's priority, delay and rate limiting, each
// merged into the key's item if inner holds one. It reaches inner as one
// call, after the bookkeeping of every item.
//
// A rate-limited add when the wrapper knows inner's rate limiter
// ([NewQueue] hands it over) is translated into what the priority queue
// would make of it (lockedAddWithOpts): the wrapper asks the limiter's
// When once per item, as the priority queue would, takes the limiter's
// delay when o.After is 0 and the shorter of the two otherwise, and hands
// inner that delay as After, with RateLimited cleared and o's priority.
// The priority queue treats an add with After d exactly as a rate-limited
// one whose delay came out d: the same ready time, the same merge, the
// same retry in its metrics (it counts one for any delay above 0, rate
// limited or not). So the queue does what it would have done, and the
// wrapper knows when each key will be ready. Where items' delays differ,
// the call reaches inner as one AddWithOpts per run of items with the same
// delay, in their order: a Get racing with it, on another goroutine, may
// take a key of the first run before the later ones are in, where the bare
// queue would have taken in the whole call at once. The limiter is asked
// on the caller's goroutine at the call, where the priority queue asks it
// a moment later on its own (a limiter that reads the clock, such as a
// token bucket, sees a time a little earlier); a call made once the queue
// is shutting down is forwarded as it was, and asks nothing, as the
// priority queue drops it without asking.
//
// Mirrors [sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue.PriorityQueue.AddWithOpts].
func (q *TracedPriorityQueue[T]) AddWithOpts(o priorityqueue.AddOpts, items ...T) {
	if o.RateLimited && q.limiter != nil && len(items) > 0 && !q.inner.ShuttingDown() {
		q.addRateLimited(o, items)
		return
	}
	for i, item := range items {
		forward := func() {}
		if i == len(items)-1 {
			forward = func() { q.inner.AddWithOpts(o, items...) }
		}
		after, rateLimited := o.After, o.RateLimited
		if rateLimited {
			q.t.RateLimited()
		}
		if rateLimited && after < 0 {
			// The priority queue takes the shorter of After and the rate
			// limiter's delay (lockedAddWithOpts): a negative After wins,
			// and the item is ready at once.
			after, rateLimited = 0, false
		}
		q.t.AddWithPriority(item, ptr.Deref(o.Priority, 0), after, rateLimited, forward)
	}
}

// addRateLimited is AddWithOpts of rate-limited items with the limiter
// known: see there.
func (q *TracedPriorityQueue[T]) addRateLimited(o priorityqueue.AddOpts, items []T) {
	afters := make([]time.Duration, len(items))
	for i, item := range items {
		// The priority queue's combination (lockedAddWithOpts): the
		// limiter's delay when After is 0, else the shorter one. A negative
		// After is kept unless the limiter's is shorter still; either way
		// the key is ready at once.
		after := o.After
		if d := q.limiter.When(item); after == 0 || d < after {
			after = d
		}
		afters[i] = after
	}
	priority := ptr.Deref(o.Priority, 0)
	for start := 0; start < len(items); {
		end := start + 1
		for end < len(items) && afters[end] == afters[start] {
			end++
		}
		run := items[start:end]
		opts := priorityqueue.AddOpts{After: afters[start], Priority: o.Priority}
		for i, item := range run {
			forward := func() {}
			if i == len(run)-1 {
				forward = func() { q.inner.AddWithOpts(opts, run...) }
			}
			q.t.RateLimited()
			q.t.AddWithPriority(item, priority, max(afters[start], 0), false, forward)
		}
		start = end
	}
}

// Add mirrors [k8s.io/client-go/util/workqueue.TypedInterface.Add]: the
// priority queue's Add, AddWithOpts with no options (priority 0).
func (q *TracedPriorityQueue[T]) Add(item T) {
	q.t.AddWithPriority(item, 0, 0, false, func() { q.inner.Add(item) })
}

// AddAfter mirrors [k8s.io/client-go/util/workqueue.TypedDelayingInterface.AddAfter]:
// the priority queue's, AddWithOpts with After.
func (q *TracedPriorityQueue[T]) AddAfter(item T, duration time.Duration) {
	q.t.AddWithPriority(item, 0, duration, false, func() { q.inner.AddAfter(item, duration) })
}

// AddRateLimited mirrors [k8s.io/client-go/util/workqueue.TypedRateLimitingInterface.AddRateLimited]:
// the priority queue's, AddWithOpts with RateLimited, translated as
// [TracedPriorityQueue.AddWithOpts] says when the wrapper knows the
// limiter.
func (q *TracedPriorityQueue[T]) AddRateLimited(item T) {
	if q.limiter != nil && !q.inner.ShuttingDown() {
		q.addRateLimited(priorityqueue.AddOpts{RateLimited: true}, []T{item})
		return
	}
	q.t.RateLimited()
	q.t.AddWithPriority(item, 0, 0, true, func() { q.inner.AddRateLimited(item) })
}

// GetWithPriority waits for the ready key of highest priority (the
// earliest among equals) and hands it to the caller with its priority;
// the caller must call Done.
//
// Mirrors [sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue.PriorityQueue.GetWithPriority].
func (q *TracedPriorityQueue[T]) GetWithPriority() (item T, priority int, shutdown bool) {
	item, priority, shutdown = q.inner.GetWithPriority()
	q.t.GotWithPriority(item, priority, shutdown)
	return item, priority, shutdown
}

// Get mirrors [k8s.io/client-go/util/workqueue.TypedInterface.Get]: the
// priority queue's, GetWithPriority without the priority.
func (q *TracedPriorityQueue[T]) Get() (T, bool) {
	item, shutdown := q.inner.Get()
	q.t.Got(item, shutdown)
	return item, shutdown
}

// Done mirrors [k8s.io/client-go/util/workqueue.TypedInterface.Done]; it
// ends item's process span.
func (q *TracedPriorityQueue[T]) Done(item T) { q.t.Done(item, func() { q.inner.Done(item) }) }

// Forget mirrors [k8s.io/client-go/util/workqueue.TypedRateLimitingInterface.Forget]: inner's.
func (q *TracedPriorityQueue[T]) Forget(item T) { q.inner.Forget(item) }

// NumRequeues mirrors [k8s.io/client-go/util/workqueue.TypedRateLimitingInterface.NumRequeues]: inner's.
func (q *TracedPriorityQueue[T]) NumRequeues(item T) int { return q.inner.NumRequeues(item) }

// Len mirrors [k8s.io/client-go/util/workqueue.TypedInterface.Len]: inner's.
func (q *TracedPriorityQueue[T]) Len() int { return q.inner.Len() }

// ShutDown mirrors [k8s.io/client-go/util/workqueue.TypedInterface.ShutDown];
// the delayed spans of items still waiting end here, since the priority
// queue drops them.
func (q *TracedPriorityQueue[T]) ShutDown() { q.t.ShutDown(q.inner.ShutDown) }

// ShutDownWithDrain mirrors [k8s.io/client-go/util/workqueue.TypedInterface.ShutDownWithDrain]
// (the priority queue's is its ShutDown), ending delayed spans as ShutDown
// does.
func (q *TracedPriorityQueue[T]) ShutDownWithDrain() { q.t.ShutDown(q.inner.ShutDownWithDrain) }

// ShuttingDown mirrors [k8s.io/client-go/util/workqueue.TypedInterface.ShuttingDown]: inner's.
func (q *TracedPriorityQueue[T]) ShuttingDown() bool { return q.inner.ShuttingDown() }
