package dropin

import (
	"context"
	"fmt"
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
// How it knows what the workqueue did. A workqueue merges an Add of a key
// that is already waiting (dirty) into that wait, and serves it once. The
// wrapper keeps, per key, the trace of the add that made the key wait and
// the links of the adds merged into it, and the process span between Get
// and Done: the same dirty/processing bookkeeping as client-go's queue
// (util/workqueue/queue.go), kept only while tracing is on. A delayed add
// (AddAfter, AddRateLimited) is handed to inner, whose own goroutine adds
// the key when the delay is over, out of the wrapper's sight: it is
// counted as served by the first Get of its key that no immediate add
// explains, or that comes after its known ready time (AddAfter; the rate
// limiter's delay is not visible through the interface, so for
// AddRateLimited the delayed span lasts until that Get).
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
	// waiting: the key is dirty (queued, or re-added while processing);
	// since is when it became so, parent the span the queued span hangs
	// under (the add, or the delayed span that fired), links the merged
	// adds.
	waiting bool
	since   time.Time
	parent  trace.SpanContext
	links   []trace.Link
	// delayed adds handed to inner and not yet seen served.
	delayed []delayedAdd
	// process is the span between Get and Done; exit ends the goroutine
	// registration that parents re-adds made during processing.
	process trace.Span
	start   time.Time
	exit    func()
}

type delayedAdd struct {
	add     trace.SpanContext
	span    trace.Span
	readyAt time.Time // zero: not known (AddRateLimited)
}

func (k *keyTrace) idle() bool { return !k.waiting && len(k.delayed) == 0 && k.process == nil }

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
// informer.object.key when the key reads as an object's ("ns/name", or a
// Stringer such as controller-runtime's reconcile.Request).
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
	return []attribute.KeyValue{q.nameKV, tracing.KeyWorkqueueKey.String(s), tracing.KeyObjectKey.String(s)}
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

func (q *TracedQueue[T]) key_locked(item T) *keyTrace {
	k := q.pending[item]
	if k == nil {
		k = &keyTrace{}
		q.pending[item] = k
	}
	return k
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
	k := q.key_locked(item)
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
	q.addDelayed(item, time.Now().Add(duration), func() { q.inner.AddAfter(item, duration) })
}

// AddRateLimited adds item when inner's rate limiter allows.
//
// Mirrors [k8s.io/client-go/util/workqueue.TypedRateLimitingInterface.AddRateLimited].
func (q *TracedQueue[T]) AddRateLimited(item T) {
	if !q.traced() {
		q.inner.AddRateLimited(item)
		return
	}
	q.addDelayed(item, time.Time{}, func() { q.inner.AddRateLimited(item) })
}

func (q *TracedQueue[T]) addDelayed(item T, readyAt time.Time, forward func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.adds++
	if q.inner.ShuttingDown() {
		forward()
		return
	}
	span := q.startAdd(item, q.inner.Len())
	span.SetAttributes(tracing.KeyWorkqueueCoalesced.Bool(false))
	_, delayed := q.tracer.Start(trace.ContextWithSpanContext(context.Background(), span.SpanContext()), tracing.SpanWorkqueueDelayed,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(q.keyAttrs(item)...))
	k := q.key_locked(item)
	k.delayed = append(k.delayed, delayedAdd{add: span.SpanContext(), span: delayed, readyAt: readyAt})
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
	k := q.key_locked(item)
	k.serveDelayed_locked(now, &q.merged)
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
		trace.WithLinks(links...), trace.WithAttributes(attrs...))
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

// serveDelayed_locked decides which delayed adds this Get serves: those
// whose ready time has passed, and, when no immediate add made the key
// wait, those whose ready time is unknown (it must have been one of them).
// The first served becomes the parent of the queued span when no
// immediate add is; the others are merged and linked.
func (k *keyTrace) serveDelayed_locked(now time.Time, merged *uint64) {
	if len(k.delayed) == 0 {
		return
	}
	explained := k.waiting
	kept := k.delayed[:0]
	for _, d := range k.delayed {
		fired := !d.readyAt.IsZero() && !d.readyAt.After(now)
		if !fired && !(d.readyAt.IsZero() && !explained) {
			kept = append(kept, d)
			continue
		}
		end := now
		if !d.readyAt.IsZero() {
			end = d.readyAt
		}
		if !k.waiting {
			d.span.SetAttributes(tracing.KeyWorkqueueCoalesced.Bool(false))
			d.span.End(trace.WithTimestamp(end))
			k.waiting, k.since, k.parent = true, end, d.span.SpanContext()
			continue
		}
		*merged++
		d.span.SetAttributes(tracing.KeyWorkqueueCoalesced.Bool(true))
		d.span.End(trace.WithTimestamp(end))
		k.links = append(k.links, trace.Link{SpanContext: d.add})
	}
	clear(k.delayed[len(kept):])
	k.delayed = kept
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
		d := time.Since(k.start)
		q.processTotal += d
		q.processLast = d
		q.processed++
		q.processingNow--
		q.inProcess.Add(-1)
		k.exit()
		k.process.End()
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
func (q *TracedQueue[T]) ShutDown() { q.inner.ShutDown() }

// ShutDownWithDrain mirrors [k8s.io/client-go/util/workqueue.TypedInterface.ShutDownWithDrain].
func (q *TracedQueue[T]) ShutDownWithDrain() { q.inner.ShutDownWithDrain() }

// ShuttingDown mirrors [k8s.io/client-go/util/workqueue.TypedInterface.ShuttingDown].
func (q *TracedQueue[T]) ShuttingDown() bool { return q.inner.ShuttingDown() }
