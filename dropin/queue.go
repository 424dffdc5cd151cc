package dropin

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/internal/handlerctx"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

const tracerName = "github.com/informer-anatomy/informer-anatomy/dropin"

var _ workqueue.TypedRateLimitingInterface[string] = (*TracedQueue[string])(nil)

// NewTracedQueue wraps inner (client-go's rate-limiting workqueue, or any
// queue behind that interface, such as controller-runtime's priority
// queue) so that the trace of an object goes on from the handler that added
// its key to the worker that reconciled it: workqueue.add, .delayed,
// .queued and .process, as the span contract's "After the handler" section
// says. Every call is forwarded to inner, which alone decides what Get
// returns and when; the wrapper only watches.
//
// It traces with the global TracerProvider unless
// [TracedQueue.SetTracerProvider] says otherwise. With no provider set, it
// asks whether tracing is on and forwards, nothing more.
//
// Ours: client-go's workqueue does not trace.
func NewTracedQueue[T comparable](name string, inner workqueue.TypedRateLimitingInterface[T]) workqueue.TypedRateLimitingInterface[T] {
	return newTracedQueue(name, inner)
}

func newTracedQueue[T comparable](name string, inner workqueue.TypedRateLimitingInterface[T]) *TracedQueue[T] {
	tp := &tracing.Switchable{}
	return &TracedQueue[T]{
		inner:   inner,
		name:    name,
		tp:      tp,
		tracer:  tp.Tracer(tracerName),
		nameKV:  tracing.KeyWorkqueueName.String(name),
		pending: map[T]*keyTrace{},
	}
}

// TracedQueue is what [NewTracedQueue] returns: reach it with a type
// assertion for SetTracerProvider and Stats.
//
// How it knows what the workqueue did. client-go's queue
// (util/workqueue/queue.go) merges an Add of a key that is dirty (added
// and not yet taken by Get) and serves it once; a key added while it is
// processing and not dirty becomes dirty and is queued again at Done. Its
// delaying queue (delaying_queue.go) keeps at most one waiting entry per
// key: a second AddAfter of a key already waiting only moves the entry's
// ready time earlier, and when the entry is ready it is an Add like any
// other. The wrapper keeps the same bookkeeping per key, only while
// tracing is on: dirty or not, since when, the add that made it dirty and
// the adds merged into it, the one waiting entry with its ready time, and
// the process span between Get and Done. An entry's Add happens on inner's
// goroutine, out of the wrapper's sight, so the wrapper fires the entry
// itself, at its ready time, before it looks at the key for any later call.
//
// Where the wrapper cannot see what inner did, it approximates:
//   - AddRateLimited's delay is the rate limiter's, which the interface
//     does not show. Its entry is taken to fire at the first Get of the key
//     that nothing else explains; its workqueue.delayed span lasts until
//     that Get, and an Add of the key in between is taken as not merged.
//   - An Add racing, on another goroutine, with the Get that takes the same
//     key can be taken as merged into the wait that Get serves when inner
//     in fact made the key dirty again; the Get that serves it then has no
//     queued span and its process starts a trace of its own.
//   - Ready times are read from the wrapper's clock (time.Now), so inner
//     must run on the real clock, as client-go's queues do by default.
type TracedQueue[T comparable] struct {
	inner  workqueue.TypedRateLimitingInterface[T]
	name   string
	tp     *tracing.Switchable
	tracer trace.Tracer
	nameKV attribute.KeyValue

	// inProcess counts traced process spans not yet ended, so that an
	// untraced Done skips the lock; everTraced is set by the first traced
	// Add, so that an untraced Get skips the provider check.
	inProcess  atomic.Int64
	everTraced atomic.Bool

	mu sync.Mutex
	// Guarded by mu, and kept only while tracing is on:
	pending                   map[T]*keyTrace
	adds, processed, merged   uint64
	processTotal, processLast time.Duration
	processingNow             int
}

// keyTrace is what the wrapper knows of one key.
type keyTrace struct {
	// waiting mirrors the workqueue's dirty set: the key was added and no
	// Get has taken it since. since is when it became so, parent the span
	// its queued span hangs under (the add, or the delayed span that
	// fired), links the adds merged into this wait.
	waiting bool
	since   time.Time
	parent  trace.SpanContext
	links   []trace.Link
	// delayed mirrors the delaying queue's one waiting entry for the key.
	delayed *delayedEntry
	// process is the span between Get and Done; exit ends the goroutine
	// registration that parents re-adds made during processing.
	process trace.Span
	start   time.Time
	exit    func()
}

// delayedEntry is a delayed add handed to inner and not yet fired.
type delayedEntry struct {
	add     trace.SpanContext // the add that made the entry
	span    trace.Span        // its workqueue.delayed
	readyAt time.Time         // zero: not known (AddRateLimited)
	links   []trace.Link      // later delayed adds merged into the entry
}

func (k *keyTrace) idle() bool { return !k.waiting && k.delayed == nil && k.process == nil }

// SetTracerProvider sets the provider of the queue's spans; nil: the global
// one. Call it before the queue is used.
func (q *TracedQueue[T]) SetTracerProvider(tp trace.TracerProvider) { q.tp.Set(tp) }

// QueueStats is what [TracedQueue.Stats] reports.
type QueueStats struct {
	// Depth is inner's Len: keys waiting for a worker.
	Depth int
	// The rest is counted only while tracing is on (zero otherwise, so that
	// the untraced queue costs nothing): Add, AddAfter and AddRateLimited
	// calls, Get-to-Done passes, adds merged into a key already waiting,
	// keys being processed now, and the time from Get to Done, in total and
	// of the last one.
	Adds, Processed, Merged   uint64
	Processing                int
	ProcessTotal, ProcessLast time.Duration
}

// Stats reads the queue's counters; the live view draws them.
func (q *TracedQueue[T]) Stats() QueueStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return QueueStats{
		Depth: q.inner.Len(), Adds: q.adds, Processed: q.processed,
		Merged: q.merged, Processing: q.processingNow, ProcessTotal: q.processTotal, ProcessLast: q.processLast,
	}
}

// traced is asked by every Add: an atomic load when a provider was set,
// a look at the global provider otherwise.
func (q *TracedQueue[T]) traced() bool {
	if q.tp.Enabled() {
		q.everTraced.Store(true)
		return true
	}
	return false
}

// keyAttrs are the attributes that name the key: workqueue.key always, and
// informer.object.key when the key reads as an informer's store key. A
// key is formatted as itself when it is a string and by String() when it
// is a fmt.Stringer (cache.ObjectName, types.NamespacedName,
// controller-runtime's reconcile.Request all are), and is then an object's
// key when it reads "name" or "namespace/name", what
// cache.MetaNamespaceKeyFunc and those String methods write. Any other key
// is formatted with %+v and names no object.
func (q *TracedQueue[T]) keyAttrs(item T) []attribute.KeyValue {
	var s string
	switch k := any(item).(type) {
	case string:
		s = k
	case fmt.Stringer:
		s = k.String()
	default:
		return []attribute.KeyValue{q.nameKV, tracing.KeyWorkqueueKey.String(fmt.Sprintf("%+v", item))}
	}
	if !isObjectKey(s) {
		return []attribute.KeyValue{q.nameKV, tracing.KeyWorkqueueKey.String(s)}
	}
	return []attribute.KeyValue{q.nameKV, tracing.KeyWorkqueueKey.String(s), tracing.KeyObjectKey.String(s)}
}

// isObjectKey: one or two non-empty parts separated by "/". A key with
// more parts (a kind in front, say) names something else, and labelling it
// informer.object.key would tie the trace to an object that does not exist.
func isObjectKey(s string) bool {
	ns, name, two := strings.Cut(s, "/")
	if !two {
		return s != ""
	}
	return ns != "" && name != "" && !strings.Contains(name, "/")
}

// startAdd starts the workqueue.add span under the traced call this
// goroutine is in (a handler, a process), or as a root.
func (q *TracedQueue[T]) startAdd(item T, depth int) trace.Span {
	ctx := context.Background()
	if parent, ok := handlerctx.Current(); ok {
		ctx = trace.ContextWithSpanContext(ctx, parent)
	}
	attrs := append(q.keyAttrs(item), tracing.KeyWorkqueueDepth.Int(depth))
	_, span := q.tracer.Start(ctx, tracing.SpanWorkqueueAdd, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(attrs...))
	return span
}

// key_locked returns item's bookkeeping as of now: a waiting entry whose
// ready time has passed has fired, as inner's goroutine made it do.
func (q *TracedQueue[T]) key_locked(item T, now time.Time) *keyTrace {
	k := q.pending[item]
	if k == nil {
		k = &keyTrace{}
		q.pending[item] = k
	}
	if e := k.delayed; e != nil && !e.readyAt.IsZero() && !e.readyAt.After(now) {
		q.fire_locked(k, e.readyAt)
	}
	return k
}

// fire_locked is the delaying queue adding the key when its entry is ready:
// an Add like any other, merged if the key is already dirty.
func (q *TracedQueue[T]) fire_locked(k *keyTrace, at time.Time) {
	e := k.delayed
	k.delayed = nil
	if k.waiting {
		q.merged++
		e.span.SetAttributes(tracing.KeyWorkqueueCoalesced.Bool(true))
		k.links = append(k.links, trace.Link{SpanContext: e.add})
	} else {
		e.span.SetAttributes(tracing.KeyWorkqueueCoalesced.Bool(false))
		k.waiting, k.since, k.parent = true, at, e.span.SpanContext()
	}
	k.links = append(k.links, e.links...)
	e.span.End(trace.WithTimestamp(at))
}

// Add adds item, or merges it into item's wait if it is already waiting.
//
// Mirrors [k8s.io/client-go/util/workqueue.TypedInterface.Add].
func (q *TracedQueue[T]) Add(item T) {
	if !q.traced() {
		q.inner.Add(item)
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.adds++
	if q.inner.ShuttingDown() {
		q.inner.Add(item) // dropped by inner, as it would be untraced
		return
	}
	span := q.startAdd(item, q.inner.Len())
	k := q.key_locked(item, time.Now())
	if k.waiting {
		q.merged++
		span.SetAttributes(tracing.KeyWorkqueueCoalesced.Bool(true))
		k.links = append(k.links, trace.Link{SpanContext: span.SpanContext()})
	} else {
		span.SetAttributes(tracing.KeyWorkqueueCoalesced.Bool(false))
		k.waiting, k.since, k.parent = true, time.Now(), span.SpanContext()
	}
	q.inner.Add(item)
	span.End()
}

// AddAfter adds item once duration has passed.
//
// Mirrors [k8s.io/client-go/util/workqueue.TypedDelayingInterface.AddAfter].
func (q *TracedQueue[T]) AddAfter(item T, duration time.Duration) {
	if duration <= 0 {
		q.Add(item)
		return
	}
	if !q.traced() {
		q.inner.AddAfter(item, duration)
		return
	}
	q.addDelayed(item, duration, func() { q.inner.AddAfter(item, duration) })
}

// AddRateLimited adds item when inner's rate limiter allows.
//
// Mirrors [k8s.io/client-go/util/workqueue.TypedRateLimitingInterface.AddRateLimited].
func (q *TracedQueue[T]) AddRateLimited(item T) {
	if !q.traced() {
		q.inner.AddRateLimited(item)
		return
	}
	q.addDelayed(item, 0, func() { q.inner.AddRateLimited(item) })
}

// addDelayed traces a delayed add (duration 0: the rate limiter's, not
// known). A key with a waiting entry keeps that one entry, as the delaying
// queue does: the add is merged into it and moves its ready time earlier
// if it is.
func (q *TracedQueue[T]) addDelayed(item T, duration time.Duration, forward func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.adds++
	if q.inner.ShuttingDown() {
		forward()
		return
	}
	now := time.Now()
	var readyAt time.Time
	if duration > 0 {
		readyAt = now.Add(duration)
	}
	span := q.startAdd(item, q.inner.Len())
	k := q.key_locked(item, now)
	if e := k.delayed; e != nil {
		q.merged++
		span.SetAttributes(tracing.KeyWorkqueueCoalesced.Bool(true))
		e.links = append(e.links, trace.Link{SpanContext: span.SpanContext()})
		// An entry whose time is not known fires no later than this
		// add's ready time: take that as its time.
		if !readyAt.IsZero() && (e.readyAt.IsZero() || readyAt.Before(e.readyAt)) {
			e.readyAt = readyAt
		}
	} else {
		span.SetAttributes(tracing.KeyWorkqueueCoalesced.Bool(false))
		_, delayed := q.tracer.Start(trace.ContextWithSpanContext(context.Background(), span.SpanContext()), tracing.SpanWorkqueueDelayed,
			trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(now), trace.WithAttributes(q.keyAttrs(item)...))
		k.delayed = &delayedEntry{add: span.SpanContext(), span: delayed, readyAt: readyAt}
	}
	forward()
	span.End()
}

// Get waits for a key and hands it to the caller, who must call Done.
//
// Mirrors [k8s.io/client-go/util/workqueue.TypedInterface.Get].
func (q *TracedQueue[T]) Get() (T, bool) {
	item, shutdown := q.inner.Get()
	// Until some Add was traced there is nothing to follow: a Get then
	// costs one atomic load more than inner's.
	if shutdown || !q.everTraced.Load() || !q.traced() {
		return item, shutdown
	}
	now := time.Now()
	q.mu.Lock()
	defer q.mu.Unlock()
	k := q.key_locked(item, now)
	if !k.waiting && k.delayed != nil {
		// Nothing the wrapper saw made the key dirty, so its waiting entry
		// did, at the latest now: a rate-limited one, whose time is not
		// known, or one inner's clock found ready a moment before ours.
		q.fire_locked(k, now)
	}
	parent, links := k.parent, k.links
	var queued trace.SpanContext
	if k.waiting {
		_, span := q.tracer.Start(trace.ContextWithSpanContext(context.Background(), parent), tracing.SpanWorkqueueQueued,
			trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(k.since), trace.WithAttributes(q.keyAttrs(item)...))
		span.End(trace.WithTimestamp(now))
		queued = span.SpanContext()
	}
	// With nothing known of how the key got here (added before tracing was
	// on, or by inner itself), the process span starts a trace of its own.
	ctx := context.Background()
	if queued.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, queued)
	}
	attrs := append(q.keyAttrs(item), tracing.KeyWorkqueueRequeues.Int(q.inner.NumRequeues(item)))
	_, process := q.tracer.Start(ctx, tracing.SpanWorkqueueProcess, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithTimestamp(now), trace.WithLinks(links...), trace.WithAttributes(attrs...))
	if k.process != nil {
		// A second Get of a key before its Done breaks the workqueue's
		// contract; end the first rather than leak it.
		k.process.End()
		k.exit()
	} else {
		q.processingNow++
		q.inProcess.Add(1)
	}
	k.waiting, k.parent, k.links = false, trace.SpanContext{}, nil
	k.process, k.start = process, now
	// Re-adds made by this goroutine until Done are children of process.
	k.exit = handlerctx.Enter(process.SpanContext())
	return item, false
}

// Done tells the queue the caller has finished with item; if it was added
// again meanwhile, it waits again.
//
// Mirrors [k8s.io/client-go/util/workqueue.TypedInterface.Done].
func (q *TracedQueue[T]) Done(item T) {
	if q.inProcess.Load() == 0 {
		q.inner.Done(item)
		return
	}
	q.mu.Lock()
	if k := q.pending[item]; k != nil && k.process != nil {
		now := time.Now()
		d := now.Sub(k.start)
		q.processTotal += d
		q.processLast = d
		q.processed++
		q.processingNow--
		q.inProcess.Add(-1)
		k.exit()
		k.process.End(trace.WithTimestamp(now))
		k.process, k.exit = nil, nil
		if k.idle() {
			delete(q.pending, item)
		}
	}
	q.mu.Unlock()
	q.inner.Done(item)
}

// Forget, NumRequeues, Len, ShutDown, ShutDownWithDrain and ShuttingDown
// are inner's.

// Forget mirrors [k8s.io/client-go/util/workqueue.TypedRateLimitingInterface.Forget].
func (q *TracedQueue[T]) Forget(item T) { q.inner.Forget(item) }

// NumRequeues mirrors [k8s.io/client-go/util/workqueue.TypedRateLimitingInterface.NumRequeues].
func (q *TracedQueue[T]) NumRequeues(item T) int { return q.inner.NumRequeues(item) }

// Len mirrors [k8s.io/client-go/util/workqueue.TypedInterface.Len].
func (q *TracedQueue[T]) Len() int { return q.inner.Len() }

// ShutDown mirrors [k8s.io/client-go/util/workqueue.TypedInterface.ShutDown].
func (q *TracedQueue[T]) ShutDown() {
	q.endDelayed()
	q.inner.ShutDown()
}

// ShutDownWithDrain mirrors [k8s.io/client-go/util/workqueue.TypedInterface.ShutDownWithDrain].
func (q *TracedQueue[T]) ShutDownWithDrain() {
	q.endDelayed()
	q.inner.ShutDownWithDrain()
}

// endDelayed ends the delayed spans of entries that have not fired: the
// delaying queue drops its waiting entries when it shuts down, so they
// never will, and a span never ended is never exported.
func (q *TracedQueue[T]) endDelayed() {
	if !q.everTraced.Load() {
		return
	}
	now := time.Now()
	q.mu.Lock()
	defer q.mu.Unlock()
	for item := range q.pending {
		// Entries already ready have fired; their keys are dirty and
		// still served by Get.
		k := q.key_locked(item, now)
		if e := k.delayed; e != nil {
			e.span.End(trace.WithTimestamp(now))
			k.delayed = nil
		}
		if k.idle() {
			delete(q.pending, item)
		}
	}
}

// ShuttingDown mirrors [k8s.io/client-go/util/workqueue.TypedInterface.ShuttingDown].
func (q *TracedQueue[T]) ShuttingDown() bool { return q.inner.ShuttingDown() }
