// Package queuetrace is the bookkeeping and the spans behind every traced
// workqueue of this project: dropin's wrappers of client-go's queues
// (NewTracedQueue, NewTracedDelayingQueue, NewTracedPlainQueue) and
// dropin/crqueue's wrapper of controller-runtime's priority queue. A
// wrapper forwards each call to its inner queue and tells a [Tracer] what
// the call was; the Tracer emits workqueue.add, .delayed, .queued and
// .process as docs/span-contract.md's "After the handler" says.
//
// The same bookkeeping feeds the queue's Stats, so a Tracer keeps it
// whenever something reads: tracing on, a live view open or a Stats caller
// (see [Tracer.keeping]). It reports no metrics: the inner queue reports
// its workqueue_* metrics through the provider it was given, as it does
// untraced.
//
// Ours: neither client-go's workqueue nor controller-runtime's priority
// queue traces.
package queuetrace

import (
	"context"
	"fmt"
	"runtime"
	"slices"
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

// Semantics says how the inner queue merges adds of one key, which the
// Tracer must know to tell which adds were merged.
type Semantics int

const (
	// ClientGo: k8s.io/client-go/util/workqueue. The queue (queue.go)
	// merges an Add of a dirty key (added, not yet taken by Get); the
	// delaying queue (delaying_queue.go) keeps at most one waiting entry
	// per key, apart from the dirty set: an Add leaves the entry waiting,
	// the entry survives a Get, and when it is ready it is an Add like any
	// other.
	ClientGo Semantics = iota
	// PriorityQueue: sigs.k8s.io/controller-runtime/pkg/controller/
	// priorityqueue (priorityqueue.go, lockedAddWithOpts). One item per
	// key, ready or waiting: an immediate add of a waiting key makes that
	// item ready now, and a delayed add of a ready key is merged into it.
	PriorityQueue
)

// Config is what a wrapper tells [New].
type Config[T comparable] struct {
	// Name is the queue's name (workqueue.name); TracerName the
	// instrumentation scope, the wrapper's import path.
	Name, TracerName string
	// Inner is the wrapped queue: the Tracer reads its Len and
	// ShuttingDown, never adds or takes.
	Inner workqueue.TypedInterface[T]
	// NumRequeues is inner's (workqueue.requeues on workqueue.process);
	// nil for a queue without a rate limiter: the attribute is left out.
	NumRequeues func(T) int
	Semantics   Semantics
	// Watched, when not nil, tells whether something may read Stats
	// without calling it yet (the live view's handler exists).
	Watched func() bool
}

// New returns a Tracer for c.Inner, tracing with the global
// TracerProvider until SetTracerProvider says otherwise. The Tracer counts
// as alive ([Alive]) until its ShutDown, or until it is garbage-collected
// without one.
func New[T comparable](c Config[T]) *Tracer[T] {
	tp := &tracing.Switchable{}
	q := &Tracer[T]{
		inner:       c.Inner,
		numRequeues: c.NumRequeues,
		semantics:   c.Semantics,
		tp:          tp,
		tracer:      tp.Tracer(c.TracerName),
		nameKV:      tracing.KeyWorkqueueName.String(c.Name),
		watched:     c.Watched,
		pending:     map[T]*keyTrace{},
		counted:     &atomic.Bool{},
	}
	q.counted.Store(true)
	alive.Add(1)
	// A queue dropped without a ShutDown (a test's, a controller's that
	// never stops) must not keep every handler call registering for the
	// rest of the process. The cleanup holds the flag, not q.
	runtime.AddCleanup(q, uncount, q.counted)
	return q
}

// alive counts the Tracers built and neither shut down nor collected.
var alive atomic.Int64

// Alive reports whether a traced queue is alive in the process: built by
// [New], and neither shut down nor garbage-collected. Only then can an Add
// look for the handler call it is made in (internal/handlerctx), so only
// then does a handler call need registering: package dropin's handler
// adapter asks this first, and with no traced queue a handler call costs
// one atomic load.
//
// Ours: client-go's workqueue does not trace.
func Alive() bool { return alive.Load() > 0 }

// uncount takes a Tracer out of alive, once.
func uncount(counted *atomic.Bool) {
	if counted.CompareAndSwap(true, false) {
		alive.Add(-1)
	}
}

// Tracer keeps, beside a workqueue, the queue's own bookkeeping per key,
// from the moment something reads it ([Tracer.keeping]): dirty or not
// ("waiting"), since when, the add that made it so and the adds merged
// into it, the delaying queue's one waiting entry with its ready time, and
// the process span between Get and Done. An entry's add happens on inner's
// goroutine, out of the Tracer's sight, so the Tracer fires the entry
// itself, at its ready time, before it looks at the key for any later
// call (the delayed span then ends at that ready time).
//
// It reports no metrics: the inner queue reports its own, through the
// MetricsProvider it was given (client-go's config's, else the global
// one; controller-runtime's priority queue, its Opts.MetricProvider),
// exactly as it would untraced.
//
// The lock. mu guards pending and the counters, nothing else: the
// bookkeeping of one call is read and changed in one critical section, so
// that two calls on one key see each other's changes whole. The inner
// queue is never called under mu (its Add can block on its own lock or, in
// client-go's delaying queue, on a channel to its goroutine), and no span
// is ended under mu (End runs the span processors, which may export
// synchronously or call back into the queue). A span is started under mu
// only where its parent is decided there: a delayed add's
// workqueue.delayed, which the entry must hold from the moment it exists.
// A wrapper therefore does its bookkeeping first and then calls inner: a
// Get that takes the key can only come after inner's add, so it finds the
// bookkeeping already done.
//
// Where the Tracer cannot see what inner did, it approximates:
//   - A rate-limited add's delay is the rate limiter's, which the
//     interface does not show (a wrapper that knows it, see
//     [RateLimiterOf], passes a plain delayed add instead). Its entry is taken to fire at the first Get
//     of the key that nothing else explains; its workqueue.delayed span
//     lasts until that Get, and an add of the key in between is taken as
//     not merged (with PriorityQueue semantics: as firing the entry).
//   - An add racing, on another goroutine, with the Get that takes the
//     same key can be taken as merged into the wait that Get serves when
//     inner in fact made the key dirty again; the Get that serves it then
//     has no queued span and its process starts a trace of its own.
//   - Ready times are read from the Tracer's clock (time.Now), so inner
//     must run on the real clock, as client-go's and controller-runtime's
//     queues do by default.
type Tracer[T comparable] struct {
	inner       workqueue.TypedInterface[T]
	numRequeues func(T) int
	semantics   Semantics
	tp          *tracing.Switchable
	tracer      trace.Tracer
	nameKV      attribute.KeyValue
	watched     func() bool
	// keep is set, for good, the first time something reads (see
	// keeping): from then on every call does the bookkeeping. Until then
	// a call costs inner's call and a few atomic loads.
	keep atomic.Bool
	// rateLimited counts AddRateLimited calls, always (one atomic add).
	rateLimited atomic.Uint64
	// counted: this Tracer is still in alive (see New).
	counted *atomic.Bool

	mu sync.Mutex
	// Guarded by mu, and kept only once keep is set:
	pending                   map[T]*keyTrace
	adds, processed, merged   uint64
	processTotal, processLast time.Duration
	processingNow             int
	// free holds idle entries for reuse (forget_locked).
	free []*keyTrace
}

// keyTrace is what the Tracer knows of one key.
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
	// process is the span between Get and Done (untracedSpan for an
	// untraced one: not nil means processing); reg ends the goroutine
	// registration that parents re-adds made during processing (and
	// ReconcileContext's spans).
	process trace.Span
	start   time.Time
	reg     handlerctx.Token
}

// delayedEntry is a delayed add handed to inner and not yet fired.
type delayedEntry struct {
	add     trace.SpanContext // the add that made the entry
	span    trace.Span        // its workqueue.delayed
	readyAt time.Time         // zero: not known (rate-limited)
	links   []trace.Link      // later delayed adds merged into the entry
}

func (k *keyTrace) idle() bool { return !k.waiting && k.delayed == nil && k.process == nil }

// ending is a span to end once mu is released.
type ending struct {
	span trace.Span
	at   time.Time
}

type endings []ending

func (e *endings) add(span trace.Span, at time.Time) { *e = append(*e, ending{span, at}) }

// end ends them; called with mu released.
func (e endings) end() {
	for _, x := range e {
		x.span.End(trace.WithTimestamp(x.at))
	}
}

// SetTracerProvider sets the provider of the queue's spans; nil: the global
// one.
func (q *Tracer[T]) SetTracerProvider(tp trace.TracerProvider) { q.tp.Set(tp) }

// Stats is what [Tracer.Stats] reports; dropin.QueueStats documents it.
type Stats struct {
	Depth                     int
	Adds, Processed, Merged   uint64
	Processing                int
	ProcessTotal, ProcessLast time.Duration
	Retries                   uint64
	Longest                   time.Duration
}

// Stats reads the counters, and inner's Len outside the lock. The first
// call makes the Tracer keep its bookkeeping from then on: the counts
// start there (a Stats caller is something that reads). Longest walks the
// keys in process.
//
// Depth is inner's Len or, if more, the keys the bookkeeping holds as
// waiting (dirty). Inner's Len alone cannot be read together with
// Processing: a key that inner's Get has taken but that Got has not yet
// recorded is in neither, and so is a key re-added while it was processed,
// between Done's bookkeeping and inner's Done putting it back in the
// queue. A reader waiting for Depth and Processing both 0 (the workshop
// kit's Burst, a test of one's own controller) then saw an idle queue
// while a key was still in its hands (it did, about one run in ten:
// 07-controller/2's solution failed its checker so). The waiting keys
// move to processing and back under the lock Stats holds, so the two
// always add up. The waiting keys also count a key added again while it
// is processed, as client-go's workqueue_depth does (its metrics.add runs
// for a dirty key whether or not it is in the queue).
func (q *Tracer[T]) Stats() Stats {
	q.keepFromNow()
	depth := q.inner.Len()
	now := time.Now()
	q.mu.Lock()
	defer q.mu.Unlock()
	waiting := 0
	for _, k := range q.pending {
		if k.waiting {
			waiting++
		}
	}
	return Stats{
		Depth: max(depth, waiting), Adds: q.adds, Processed: q.processed,
		Merged: q.merged, Processing: q.processingNow, ProcessTotal: q.processTotal, ProcessLast: q.processLast,
		Retries: q.rateLimited.Load(), Longest: q.longest_locked(now),
	}
}

// RateLimited counts an AddRateLimited call (the live view's retries).
func (q *Tracer[T]) RateLimited() { q.rateLimited.Add(1) }

// traced is asked by every kept call: an atomic load when a provider was
// set, a look at the global provider otherwise.
func (q *Tracer[T]) traced() bool { return q.tp.Enabled() }

// keeping is asked by every add: whether the Tracer keeps its
// bookkeeping. It does once something reads what the bookkeeping gives,
// and then for good (a key's wait must be seen from its add to its Get to
// be told right): tracing on, the live view's handler made, or a Stats
// call. Before that an add costs these checks (atomic loads and a type
// comparison) and inner's call, nothing more: the untraced queue stays as
// cheap as client-go's (its metrics are inner's own, kept or not). Keys
// added before it began are unknown to the bookkeeping: their Get starts
// no queued span.
func (q *Tracer[T]) keeping() bool {
	if q.keep.Load() {
		return true
	}
	if !q.tp.Enabled() && (q.watched == nil || !q.watched()) {
		return false
	}
	q.keep.Store(true)
	return true
}

func (q *Tracer[T]) keepFromNow() {
	if !q.keep.Load() {
		q.keep.Store(true)
	}
}

// keyAttrs are the attributes that name the key: workqueue.key always, and
// informer.object.key when the key reads as an informer's store key. A
// key is formatted as itself when it is a string and by String() when it
// is a fmt.Stringer (cache.ObjectName, types.NamespacedName,
// controller-runtime's reconcile.Request all are), and is then an object's
// key when it reads "name" or "namespace/name", what
// cache.MetaNamespaceKeyFunc and those String methods write. Any other key
// is formatted with %+v and names no object.
func (q *Tracer[T]) keyAttrs(item T) []attribute.KeyValue {
	var s string
	switch k := any(item).(type) {
	case string:
		s = k
	case fmt.Stringer:
		s = k.String()
	default:
		return []attribute.KeyValue{q.nameKV, tracing.KeyWorkqueueKey.String(tracing.Value(fmt.Sprintf("%+v", item)))}
	}
	// A key is made of an object's fields: valid UTF-8, bounded, copied
	// (tracing.Value), or one bad byte fails its batch's OTLP export.
	s = tracing.Value(s)
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

// untracedSpan stands for the spans an untraced add does not make: it
// records nothing and its span context is invalid, so the bookkeeping
// goes on as for a traced add and marks the wait it makes as untraced.
var untracedSpan = trace.SpanFromContext(context.Background())

// startAdd starts the workqueue.add span under the traced call this
// goroutine is in (a handler, a process), or as a root when it is in no
// registered call. In a call registered as untraced (a handler call for
// a change the informer left out of the traces, its root dropped by the
// sampler or its object left out by the TraceFilter, or the process of a
// key only such calls added) it starts nothing: it returns untracedSpan,
// and the add's wait, its delayed entry and its process stay untraced, as
// the call that made the add is. So a trace the sampler dropped at its
// root stays absent, where a root here would be sampled again, and the
// filter keeps out of a trace what it keeps out of the informer's. An add
// made outside any handler call or process (a user's own periodic Add)
// continues no trace and is traced as a root.
func (q *Tracer[T]) startAdd(item T, depth int, extra []attribute.KeyValue) trace.Span {
	parent, untraced := handlerctx.Untraced()
	if untraced {
		return untracedSpan
	}
	ctx := context.Background()
	if parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, parent)
	}
	attrs := append(append(q.keyAttrs(item), tracing.KeyWorkqueueDepth.Int(depth)), extra...)
	_, span := q.tracer.Start(ctx, tracing.SpanWorkqueueAdd, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(attrs...))
	return span
}

// key_locked returns item's bookkeeping as of now: a waiting entry whose
// ready time has passed has fired, as inner's goroutine made it do.
// A zero now is read from the clock only if an entry needs it.
func (q *Tracer[T]) key_locked(item T, now time.Time, ends *endings) *keyTrace {
	k := q.pending[item]
	if k == nil {
		if n := len(q.free); n > 0 {
			k = q.free[n-1]
			q.free = q.free[:n-1]
		} else {
			k = &keyTrace{}
		}
		q.pending[item] = k
	}
	if e := k.delayed; e != nil && !e.readyAt.IsZero() {
		if now.IsZero() {
			now = time.Now()
		}
		if !e.readyAt.After(now) {
			q.fire_locked(k, e.readyAt, ends)
		}
	}
	return k
}

// forget_locked drops item's bookkeeping, idle now, and keeps the entry
// for the next key: a controller's keys come and go all the time, and an
// allocation per key and pass would cost more than the map's own work.
func (q *Tracer[T]) forget_locked(item T, k *keyTrace) {
	delete(q.pending, item)
	if len(q.free) < maxFree {
		*k = keyTrace{}
		q.free = append(q.free, k)
	}
}

// maxFree bounds the entries kept for reuse.
const maxFree = 256

// fire_locked is the delaying queue adding the key when its entry is ready
// (or, with PriorityQueue semantics, an immediate add making the waiting
// item ready): an add like any other, merged if the key is already dirty.
// The entry's span is ended by the caller, once mu is released.
func (q *Tracer[T]) fire_locked(k *keyTrace, at time.Time, ends *endings) {
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
	ends.add(e.span, at)
}

// Add traces an immediate add of item and calls forward, which hands it to
// inner (Add, or what inner takes for one: client-go's AddAfter with a
// delay of zero or less, the priority queue's AddWithOpts without delay).
func (q *Tracer[T]) Add(item T, forward func()) { q.add(item, nil, forward) }

// AddWithPriority is [Tracer.Add] or [Tracer.AddDelayed] (by d and
// rateLimited) of an add that asked for priority: its workqueue.add says
// so (workqueue.priority).
func (q *Tracer[T]) AddWithPriority(item T, priority int, d time.Duration, rateLimited bool, forward func()) {
	if !q.keeping() {
		forward()
		return
	}
	shutting := q.inner.ShuttingDown()
	var extra []attribute.KeyValue
	if q.traced() {
		extra = []attribute.KeyValue{tracing.KeyWorkqueuePriority.Int(priority)}
	}
	if !rateLimited && d <= 0 {
		q.addKept(item, extra, shutting, forward)
		return
	}
	q.addDelayedKept(item, d, rateLimited, extra, shutting, forward)
}

func (q *Tracer[T]) add(item T, extra []attribute.KeyValue, forward func()) {
	if !q.keeping() {
		forward()
		return
	}
	q.addKept(item, extra, q.inner.ShuttingDown(), forward)
}

// addKept is an immediate add once keeping said yes; shutting is inner's
// ShuttingDown, read once by the caller.
func (q *Tracer[T]) addKept(item T, extra []attribute.KeyValue, shutting bool, forward func()) {
	if shutting {
		q.countAdd()
		forward() // dropped by inner, counted nowhere else
		return
	}
	span := untracedSpan
	traced := q.traced()
	if traced {
		span = q.startAdd(item, q.inner.Len(), extra)
	}
	// The time a wait began is read only by its queued span: untraced,
	// the clock is not read (Stats alone needs none here).
	var now time.Time
	if traced {
		now = time.Now()
	}
	var ends endings
	q.mu.Lock()
	q.adds++
	k := q.key_locked(item, now, &ends)
	if q.semantics == PriorityQueue && k.delayed != nil {
		// The priority queue keeps one item per key: an immediate add of a
		// waiting item makes it ready now, and this add is merged into it.
		if now.IsZero() {
			now = time.Now()
		}
		q.fire_locked(k, now, &ends)
	}
	if k.waiting {
		q.merged++
		span.SetAttributes(tracing.KeyWorkqueueCoalesced.Bool(true))
		if sc := span.SpanContext(); sc.IsValid() {
			k.links = append(k.links, trace.Link{SpanContext: sc})
		}
	} else {
		span.SetAttributes(tracing.KeyWorkqueueCoalesced.Bool(false))
		k.waiting, k.since, k.parent = true, now, span.SpanContext()
	}
	q.mu.Unlock()
	forward()
	span.End()
	ends.end()
}

func (q *Tracer[T]) countAdd() {
	q.mu.Lock()
	q.adds++
	q.mu.Unlock()
}

// AddDelayed traces a delayed add and calls forward, which hands it to
// inner: after d, or, when rateLimited, after the rate limiter's delay,
// which the Tracer does not know (d > 0 then says it is no later than d, as
// the priority queue's AddWithOpts with both). A key with a waiting entry
// keeps that one entry, as the delaying queue does: the add is merged into
// it and moves its ready time earlier if it is. With PriorityQueue
// semantics a delayed add of a key already waiting is merged into that
// wait.
//
// Not rate-limited and d <= 0, it is an immediate add ([Tracer.Add]):
// client-go's AddAfter and the priority queue both take it as one.
func (q *Tracer[T]) AddDelayed(item T, d time.Duration, rateLimited bool, forward func()) {
	if !q.keeping() {
		forward()
		return
	}
	shutting := q.inner.ShuttingDown()
	if !rateLimited && d <= 0 {
		q.addKept(item, nil, shutting, forward)
		return
	}
	q.addDelayedKept(item, d, rateLimited, nil, shutting, forward)
}

func (q *Tracer[T]) addDelayedKept(item T, d time.Duration, rateLimited bool, extra []attribute.KeyValue, shutting bool, forward func()) {
	if shutting {
		q.countAdd()
		forward()
		return
	}
	span := untracedSpan
	if q.traced() {
		span = q.startAdd(item, q.inner.Len(), extra)
	}
	now := time.Now()
	var readyAt time.Time
	if d > 0 {
		readyAt = now.Add(d)
	}
	var ends endings
	q.mu.Lock()
	q.adds++
	k := q.key_locked(item, now, &ends)
	switch e := k.delayed; {
	case e != nil:
		q.merged++
		span.SetAttributes(tracing.KeyWorkqueueCoalesced.Bool(true))
		if sc := span.SpanContext(); sc.IsValid() {
			e.links = append(e.links, trace.Link{SpanContext: sc})
		}
		// An entry whose time is not known fires no later than this
		// add's ready time: take that as its time.
		if !readyAt.IsZero() && (e.readyAt.IsZero() || readyAt.Before(e.readyAt)) {
			e.readyAt = readyAt
		}
	case q.semantics == PriorityQueue && k.waiting:
		q.merged++
		span.SetAttributes(tracing.KeyWorkqueueCoalesced.Bool(true))
		if sc := span.SpanContext(); sc.IsValid() {
			k.links = append(k.links, trace.Link{SpanContext: sc})
		}
	case !span.SpanContext().IsValid():
		// An untraced add: its entry waits without a span.
		k.delayed = &delayedEntry{span: untracedSpan, readyAt: readyAt}
	default:
		span.SetAttributes(tracing.KeyWorkqueueCoalesced.Bool(false))
		_, delayed := q.tracer.Start(trace.ContextWithSpanContext(context.Background(), span.SpanContext()), tracing.SpanWorkqueueDelayed,
			trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(now), trace.WithAttributes(q.keyAttrs(item)...))
		k.delayed = &delayedEntry{add: span.SpanContext(), span: delayed, readyAt: readyAt}
	}
	q.mu.Unlock()
	forward()
	span.End()
	ends.end()
}

// Got traces inner's Get having returned item: the queued span from the
// moment the key waited, and the process span, open until [Tracer.Done].
func (q *Tracer[T]) Got(item T, shutdown bool) { q.got(item, shutdown, nil) }

// GotWithPriority is [Tracer.Got] of a Get that returned item's priority:
// the process span says it (workqueue.priority).
func (q *Tracer[T]) GotWithPriority(item T, priority int, shutdown bool) {
	if shutdown || !q.keep.Load() {
		return
	}
	q.got(item, shutdown, []attribute.KeyValue{tracing.KeyWorkqueuePriority.Int(priority)})
}

func (q *Tracer[T]) got(item T, shutdown bool, extra []attribute.KeyValue) {
	// Until something reads there is nothing to keep: a Get then costs
	// one atomic load more than inner's.
	if shutdown || !q.keep.Load() {
		return
	}
	traced := q.traced()
	requeues := -1
	if traced && q.numRequeues != nil {
		requeues = q.numRequeues(item)
	}
	now := time.Now()
	var ends endings
	q.mu.Lock()
	k := q.key_locked(item, now, &ends)
	if !k.waiting && k.delayed != nil {
		// Nothing the Tracer saw made the key dirty, so its waiting entry
		// did, at the latest now: a rate-limited one, whose time is not
		// known, or one inner's clock found ready a moment before ours.
		q.fire_locked(k, now, &ends)
	}
	waiting, since, parent, links := k.waiting, k.since, k.parent, k.links
	prev, prevReg := k.process, k.reg
	if prev == nil {
		q.processingNow++
	}
	// The key is processing from here, untraced until its process span is
	// set below. Only this goroutine, which has not yet returned the key
	// to a worker, can end it, so no Done of it comes in between.
	k.waiting, k.parent, k.links = false, trace.SpanContext{}, nil
	k.process, k.reg, k.start = untracedSpan, handlerctx.Token{}, now
	q.mu.Unlock()

	if prev != nil {
		// A second Get of a key before its Done breaks the workqueue's
		// contract; end the first rather than leak it.
		prevReg.Exit()
		prev.End()
	}
	ends.end()
	if !traced {
		return
	}
	// Links to untraced adds merged into the wait are no links.
	links = slices.DeleteFunc(links, func(l trace.Link) bool { return !l.SpanContext.IsValid() })
	if waiting && !parent.IsValid() && len(links) == 0 {
		// Only untraced adds made this wait (see startAdd): the change
		// that caused it was left out of the traces (by the sampler or
		// the trace filter), and so is its process, the re-adds made in
		// it, and, through ReconcileContext, what the reconcile starts:
		// an unsampled span context stands for the process, which a
		// ParentBased sampler follows without deciding again.
		q.setProcess(item, untracedSpan, now, handlerctx.Register(handlerctx.Unsampled()))
		return
	}
	var queued trace.SpanContext
	if waiting && parent.IsValid() {
		_, span := q.tracer.Start(trace.ContextWithSpanContext(context.Background(), parent), tracing.SpanWorkqueueQueued,
			trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(since), trace.WithAttributes(q.keyAttrs(item)...))
		span.End(trace.WithTimestamp(now))
		queued = span.SpanContext()
	}
	// With nothing known of how the key got here (added before tracing was
	// on, or by inner itself), the process span starts a trace of its own.
	ctx := context.Background()
	if queued.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, queued)
	}
	attrs := append(q.keyAttrs(item), extra...)
	if requeues >= 0 {
		attrs = append(attrs, tracing.KeyWorkqueueRequeues.Int(requeues))
	}
	_, process := q.tracer.Start(ctx, tracing.SpanWorkqueueProcess, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithTimestamp(now), trace.WithLinks(links...), trace.WithAttributes(attrs...))
	// Re-adds made by this goroutine until Done are children of process.
	q.setProcess(item, process, now, handlerctx.Register(process.SpanContext()))
}

// setProcess records item's process span, open until Done, and reg, its
// goroutine registration.
func (q *Tracer[T]) setProcess(item T, process trace.Span, now time.Time, reg handlerctx.Token) {
	q.mu.Lock()
	// The shutdown may have dropped the key's bookkeeping meanwhile (it
	// was idle); an add may have made new bookkeeping for it.
	k := q.pending[item]
	if k == nil {
		k = &keyTrace{}
		q.pending[item] = k
	}
	k.process, k.start, k.reg = process, now, reg
	q.mu.Unlock()
}

// Done ends item's process span and calls forward, which hands the Done
// to inner.
func (q *Tracer[T]) Done(item T, forward func()) {
	if !q.keep.Load() {
		forward()
		return
	}
	var process trace.Span
	var reg handlerctx.Token
	var now time.Time
	q.mu.Lock()
	if k := q.pending[item]; k != nil && k.process != nil {
		now = time.Now()
		d := now.Sub(k.start)
		q.processTotal += d
		q.processLast = d
		q.processed++
		q.processingNow--
		process, reg = k.process, k.reg
		k.process, k.reg = nil, handlerctx.Token{}
		if k.idle() {
			q.forget_locked(item, k)
		}
	}
	q.mu.Unlock()
	if process != nil {
		reg.Exit()
		process.End(trace.WithTimestamp(now))
	}
	forward()
}

// ShutDown ends the delayed spans of entries that have not fired and calls
// forward, which shuts inner down: the delaying queue drops its waiting
// entries when it shuts down (the priority queue all its items), so they
// never will fire, and a span never ended is never exported. Every span
// the queue started has ended when ShutDown returns.
//
// The Tracer stops counting as alive: inner drops what is added from now
// on, so no handler call need register for it.
func (q *Tracer[T]) ShutDown(forward func()) {
	uncount(q.counted)
	if q.keep.Load() {
		now := time.Now()
		var ends endings
		q.mu.Lock()
		for item := range q.pending {
			// Entries already ready have fired; their keys are dirty and
			// still served by Get (client-go's queue drains them).
			k := q.key_locked(item, now, &ends)
			if e := k.delayed; e != nil {
				ends.add(e.span, now)
				k.delayed = nil
			}
			if k.idle() {
				delete(q.pending, item)
			}
		}
		q.mu.Unlock()
		ends.end()
	}
	forward()
}
