package dropin

import (
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/internal/queuetrace"
)

const tracerName = "github.com/informer-anatomy/informer-anatomy/dropin"

var (
	_ workqueue.TypedRateLimitingInterface[string] = (*TracedQueue[string])(nil)
	_ workqueue.TypedDelayingInterface[string]     = (*TracedDelayingQueue[string])(nil)
	_ workqueue.TypedInterface[string]             = (*TracedPlainQueue[string])(nil)
)

// NewTracedQueue wraps inner, client-go's rate-limiting workqueue
// (workqueue.NewTypedRateLimitingQueueWithConfig), so that the trace of an
// object goes on from the handler that added its key to the worker that
// reconciled it: workqueue.add, .delayed, .queued and .process, as the
// span contract's "After the handler" section says. Every call is
// forwarded to inner as it was made, which alone decides what Get returns
// and when; the wrapper only watches. [NewTracedDelayingQueue] and
// [NewTracedPlainQueue] wrap client-go's delaying and plain queues;
// controller-runtime's priority queue has its own wrapper,
// dropin/crqueue's NewTracedPriorityQueue, which keeps its AddWithOpts
// (behind this one the priority queue is only a rate-limiting queue, and
// every key gets the default priority).
//
// It traces with the global TracerProvider unless
// [TracedQueue.SetTracerProvider] says otherwise.
//
// It reports no metrics of its own: inner reports its workqueue_* metrics
// through the MetricsProvider it was built with (its config's, else the one
// workqueue.SetProvider installed, which component-base's
// metrics/prometheus/workqueue and controller-runtime install), as it
// would untraced, and every call reaches inner as it was made.
//
// With no tracing, no live view handler made and no Stats called, it asks
// whether any of them is there and forwards, nothing more.
//
// Ours: client-go's workqueue does not trace.
//
// It finds inner's rate limiter by reading an unexported field of
// client-go's queue (see [TracedQueue.AddRateLimited]); if a client-go
// version renames that field the queue still works, but its rate-limited
// delays are guessed again. [NewTracedRateLimitingQueueWithConfig] builds
// the queue itself and needs no such reading.
func NewTracedQueue[T comparable](name string, inner workqueue.TypedRateLimitingInterface[T]) workqueue.TypedRateLimitingInterface[T] {
	var limiter workqueue.TypedRateLimiter[T]
	if !noRateLimiterOf.Load() {
		limiter = queuetrace.RateLimiterOf[T](inner)
	}
	return newTracedQueue(name, inner, limiter)
}

// noRateLimiterOf, set by a test only, makes NewTracedQueue skip
// queuetrace.RateLimiterOf, as a client-go that renamed the field would:
// the tests of NewTracedRateLimitingQueueWithConfig set it to show that
// its limiter reaches the wrapper without reflection.
var noRateLimiterOf atomic.Bool

// NewTracedRateLimitingQueueWithConfig builds client-go's rate-limiting
// workqueue from rateLimiter and config, exactly as
// workqueue.NewTypedRateLimitingQueueWithConfig does, and returns it
// traced under config.Name, as [NewTracedQueue] would: the same spans,
// live view and Stats, and client-go's own metrics. Swapping it in for client-go's constructor
// is a change of the function's package and name, nothing else:
//
//	queue := dropin.NewTracedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
//		workqueue.TypedRateLimitingQueueConfig[string]{Name: "pods"})
//
// The difference from NewTracedQueue over a queue built by client-go is
// how the wrapper learns the rate limiter, which it needs to know the
// delay AddRateLimited picks ([TracedQueue.AddRateLimited]): here it is
// handed rateLimiter, the very limiter the queue was built with, instead
// of reading it out of the queue through reflect, so a client-go upgrade
// cannot take it away.
//
// config reaches client-go's constructor untouched, so each field means
// what it means there:
//   - Name names the queue's metrics and its spans' workqueue.name.
//     Unnamed, client-go's queue records no metrics.
//   - MetricsProvider (nil: client-go's global one, workqueue.SetProvider)
//     is given to client-go's queue, which reports through it; the
//     wrapper reports nothing of its own.
//   - Clock (nil: the real clock) is the delaying queue's clock.
//   - DelayingQueue (nil: client-go builds one from Name, MetricsProvider
//     and Clock) is what the queue delays keys on, and then its own name,
//     provider and clock hold for client-go's metrics and delays, not
//     config's (the wrapper's spans stay config.Name's). The wrapper
//     takes it to keep keys as client-go's delaying queue does (one
//     waiting entry per key): give it client-go's, untraced; the wrapper
//     traces the whole queue.
//
// Mirrors workqueue.NewTypedRateLimitingQueueWithConfig
// (k8s.io/client-go/util/workqueue/rate_limiting_queue.go), which it
// calls. Ours: client-go's workqueue does not trace. The wrapper reads
// ready times from the real clock (time.Now) whatever config.Clock is, as
// [TracedQueue] says: with a fake Clock the queue serves keys when the
// fake clock says, but its delayed spans follow the real one.
func NewTracedRateLimitingQueueWithConfig[T comparable](rateLimiter workqueue.TypedRateLimiter[T], config workqueue.TypedRateLimitingQueueConfig[T]) workqueue.TypedRateLimitingInterface[T] {
	inner := workqueue.NewTypedRateLimitingQueueWithConfig(rateLimiter, config)
	return newTracedQueue(config.Name, inner, rateLimiter)
}

// newTracedQueue wraps inner under name; limiter is inner's rate limiter
// (nil: unknown, AddRateLimited is forwarded and its delay guessed).
func newTracedQueue[T comparable](name string, inner workqueue.TypedRateLimitingInterface[T], limiter workqueue.TypedRateLimiter[T]) workqueue.TypedRateLimitingInterface[T] {
	return registered(&TracedQueue[T]{
		traced:  newTraced(name, inner, inner.NumRequeues),
		inner:   inner,
		limiter: limiter,
	}, name, "rate-limiting")
}

// NewTracedDelayingQueue wraps inner, client-go's delaying workqueue
// (workqueue.NewTypedDelayingQueueWithConfig), as [NewTracedQueue] wraps a
// rate-limiting one. Its process spans have no workqueue.requeues: a
// delaying queue counts none.
//
// Ours: client-go's workqueue does not trace.
func NewTracedDelayingQueue[T comparable](name string, inner workqueue.TypedDelayingInterface[T]) workqueue.TypedDelayingInterface[T] {
	return registered(&TracedDelayingQueue[T]{traced: newTraced(name, inner, nil), inner: inner}, name, "delaying")
}

// NewTracedPlainQueue wraps inner, client-go's plain workqueue
// (workqueue.NewTypedWithConfig), as [NewTracedQueue] wraps a
// rate-limiting one: workqueue.add, .queued and .process, no delays, no
// workqueue.requeues.
//
// Ours: client-go's workqueue does not trace.
func NewTracedPlainQueue[T comparable](name string, inner workqueue.TypedInterface[T]) workqueue.TypedInterface[T] {
	return registered(&TracedPlainQueue[T]{traced: newTraced(name, inner, nil)}, name, "plain")
}

// newTraced builds the Tracer of a queue wrapping client-go's inner.
func newTraced[T comparable](name string, inner workqueue.TypedInterface[T], numRequeues func(T) int) traced[T] {
	return traced[T]{
		t: queuetrace.New(queuetrace.Config[T]{
			Name: name, TracerName: tracerName, Inner: inner, NumRequeues: numRequeues, Semantics: queuetrace.ClientGo,
			Watched: liveViewOn.Load,
		}),
		inner: inner,
	}
}

// TracedQueue is what [NewTracedQueue] returns: reach it with a type
// assertion for SetTracerProvider and Stats. Its methods are
// client-go's TypedRateLimitingInterface's: Add, Get, Done, Len, ShutDown,
// ShutDownWithDrain, ShuttingDown (shared with [TracedPlainQueue]),
// AddAfter, AddRateLimited, Forget and NumRequeues.
//
// How it knows what the workqueue did. client-go's queue
// (util/workqueue/queue.go) merges an Add of a key that is dirty (added
// and not yet taken by Get) and serves it once; a key added while it is
// processing and not dirty becomes dirty and is queued again at Done. Its
// delaying queue (delaying_queue.go) keeps at most one waiting entry per
// key: a second AddAfter of a key already waiting only moves the entry's
// ready time earlier, and when the entry is ready it is an Add like any
// other. The wrapper keeps the same bookkeeping per key from the moment
// something reads it (tracing on, the live view's
// handler made, a Stats call): dirty or not, since when, the add that made
// it dirty and the adds merged into it, the one waiting entry with its
// ready time, and the process span between Get and Done. An entry's Add
// happens on inner's goroutine, out of the wrapper's sight, so the
// wrapper fires the entry itself, at its ready time, before it looks at
// the key for any later call.
//
// The wrapper's lock guards only that bookkeeping: inner is never called
// under it and no span is ended under it (a span processor that exports
// synchronously, or calls back into the queue, runs outside it). Each call
// does its bookkeeping first and then calls inner, so the Get that takes a
// key finds the add's bookkeeping done.
//
// Where the wrapper cannot see what inner did, it approximates:
//   - AddRateLimited's delay is the rate limiter's, which the interface
//     does not show. Of client-go's rate-limiting queue the wrapper is
//     given the limiter ([NewTracedRateLimitingQueueWithConfig]) or reads
//     it ([NewTracedQueue]; see [TracedQueue.AddRateLimited]) and knows
//     it; of any other inner, the entry is taken to fire at the first Get of the key
//     that nothing else explains: its workqueue.delayed span lasts until
//     that Get, and an Add of the key in between is taken as not merged.
//   - An Add racing, on another goroutine, with the Get that takes the same
//     key can be taken as merged into the wait that Get serves when inner
//     in fact made the key dirty again; the Get that serves it then has no
//     queued span and its process starts a trace of its own.
//   - Ready times are read from the wrapper's clock (time.Now), so inner
//     must run on the real clock, as client-go's queues do by default.
type TracedQueue[T comparable] struct {
	traced[T]
	inner workqueue.TypedRateLimitingInterface[T]
	// limiter is inner's rate limiter when it is known: the one
	// NewTracedRateLimitingQueueWithConfig built inner with, or, behind
	// NewTracedQueue, the one queuetrace.RateLimiterOf read out of
	// client-go's rate-limiting queue; else nil.
	limiter workqueue.TypedRateLimiter[T]
}

// TracedDelayingQueue is what [NewTracedDelayingQueue] returns: a
// [TracedPlainQueue]'s methods and AddAfter, traced as [TracedQueue]
// says.
type TracedDelayingQueue[T comparable] struct {
	traced[T]
	inner workqueue.TypedDelayingInterface[T]
}

// TracedPlainQueue is what [NewTracedPlainQueue] returns: Add, Get, Done,
// Len, ShutDown, ShutDownWithDrain and ShuttingDown, with SetTracerProvider
// and Stats, traced as [TracedQueue] says.
type TracedPlainQueue[T comparable] struct {
	traced[T]
}

// traced is what the three share: the calls of client-go's TypedInterface
// and the Tracer that keeps the bookkeeping.
type traced[T comparable] struct {
	t     *queuetrace.Tracer[T]
	inner workqueue.TypedInterface[T]
}

// SetTracerProvider sets the provider of the queue's spans; nil: the global
// one. Call it before the queue is used.
func (q *traced[T]) SetTracerProvider(tp trace.TracerProvider) { q.t.SetTracerProvider(tp) }

// QueueStats is what Stats reports.
type QueueStats struct {
	// Depth is how many keys wait for a worker: inner's Len, or, if more,
	// the keys the queue has seen added and not yet handed to a worker
	// (among them one added again while it is processed, which client-go's
	// workqueue_depth counts too). Read with Processing under one lock, so
	// that a key on its way from the queue to a worker, or back into it,
	// never reads as neither: Depth and Processing both 0 means idle.
	// (Before the bookkeeping starts, see below, it is inner's Len.)
	Depth int
	// Counted from the moment something reads them, tracing on or off:
	// the first Stats call, the live view's handler made
	// (LiveViewHandler) or tracing on, whichever comes first. Before that the queue keeps no
	// bookkeeping, so that it costs what client-go's does; a key added
	// before then and still waiting is not seen. Add, AddAfter and
	// AddRateLimited calls, Get-to-Done passes, adds merged into a key
	// already waiting, keys being processed now, and the time from Get to
	// Done, in total and of the last one.
	Adds, Processed, Merged   uint64
	Processing                int
	ProcessTotal, ProcessLast time.Duration
	// Retries counts AddRateLimited calls, always.
	Retries uint64
	// Longest is how long the key in process longest has been so far (0:
	// none), computed at the call.
	Longest time.Duration
}

// Stats reads the queue's counters; the live view draws them. The first
// call makes the queue count from then on (see QueueStats).
func (q *traced[T]) Stats() QueueStats { return QueueStats(q.t.Stats()) }

// Add adds item, or merges it into item's wait if it is already waiting.
//
// Mirrors [k8s.io/client-go/util/workqueue.TypedInterface.Add].
func (q *traced[T]) Add(item T) { q.t.Add(item, func() { q.inner.Add(item) }) }

// Get waits for a key and hands it to the caller, who must call Done.
//
// Mirrors [k8s.io/client-go/util/workqueue.TypedInterface.Get].
func (q *traced[T]) Get() (T, bool) {
	item, shutdown := q.inner.Get()
	q.t.Got(item, shutdown)
	return item, shutdown
}

// Done tells the queue the caller has finished with item; if it was added
// again meanwhile, it waits again.
//
// Mirrors [k8s.io/client-go/util/workqueue.TypedInterface.Done].
func (q *traced[T]) Done(item T) { q.t.Done(item, func() { q.inner.Done(item) }) }

// Len mirrors [k8s.io/client-go/util/workqueue.TypedInterface.Len]: inner's.
func (q *traced[T]) Len() int { return q.inner.Len() }

// ShutDown mirrors [k8s.io/client-go/util/workqueue.TypedInterface.ShutDown].
// The delayed spans of entries that have not fired end here: the delaying
// queue drops them.
func (q *traced[T]) ShutDown() { q.t.ShutDown(q.inner.ShutDown) }

// ShutDownWithDrain mirrors [k8s.io/client-go/util/workqueue.TypedInterface.ShutDownWithDrain],
// ending delayed spans as ShutDown does.
func (q *traced[T]) ShutDownWithDrain() { q.t.ShutDown(q.inner.ShutDownWithDrain) }

// ShuttingDown mirrors [k8s.io/client-go/util/workqueue.TypedInterface.ShuttingDown]: inner's.
func (q *traced[T]) ShuttingDown() bool { return q.inner.ShuttingDown() }

// AddAfter adds item once duration has passed. A duration of zero or less
// is forwarded as it is: client-go's delaying queue counts it as a retry
// (its retries metric) before it adds the item at once, and the
// wrapper traces it as the immediate add it is.
//
// Mirrors [k8s.io/client-go/util/workqueue.TypedDelayingInterface.AddAfter].
func (q *TracedQueue[T]) AddAfter(item T, duration time.Duration) {
	q.t.AddDelayed(item, duration, false, func() { q.inner.AddAfter(item, duration) })
}

// AddRateLimited adds item when inner's rate limiter allows.
//
// When inner is client-go's rate-limiting queue, whose AddRateLimited is
// its delaying queue's AddAfter with the limiter's When (rate_limiting_queue.go),
// the wrapper makes that same call itself: it asks inner's limiter (the
// only call to When, as inner's AddRateLimited would make it) and hands
// the delay to inner's AddAfter. [NewTracedRateLimitingQueueWithConfig]
// hands the wrapper the limiter it built the queue with; [NewTracedQueue]
// reads it out of the queue. The queue does what it would have done,
// and the wrapper knows when the key will be ready: the workqueue.delayed
// span ends then, as the key becomes ready in client-go's queue.
// Any other inner gets its AddRateLimited, with the delay unknown (see
// [TracedQueue]).
//
// Mirrors [k8s.io/client-go/util/workqueue.TypedRateLimitingInterface.AddRateLimited].
func (q *TracedQueue[T]) AddRateLimited(item T) {
	q.t.RateLimited()
	if q.limiter != nil {
		d := q.limiter.When(item)
		q.t.AddDelayed(item, d, false, func() { q.inner.AddAfter(item, d) })
		return
	}
	q.t.AddDelayed(item, 0, true, func() { q.inner.AddRateLimited(item) })
}

// Forget mirrors [k8s.io/client-go/util/workqueue.TypedRateLimitingInterface.Forget]: inner's.
func (q *TracedQueue[T]) Forget(item T) { q.inner.Forget(item) }

// NumRequeues mirrors [k8s.io/client-go/util/workqueue.TypedRateLimitingInterface.NumRequeues]: inner's.
func (q *TracedQueue[T]) NumRequeues(item T) int { return q.inner.NumRequeues(item) }

// AddAfter is [TracedQueue.AddAfter] for a delaying queue.
//
// Mirrors [k8s.io/client-go/util/workqueue.TypedDelayingInterface.AddAfter].
func (q *TracedDelayingQueue[T]) AddAfter(item T, duration time.Duration) {
	q.t.AddDelayed(item, duration, false, func() { q.inner.AddAfter(item, duration) })
}
