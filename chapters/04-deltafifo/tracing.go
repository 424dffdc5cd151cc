package deltafifo

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// TraceFilter decides, for one object about to get a trace of its own,
// whether it gets one: key is its store key, obj the object (a
// [DeletedFinalStateUnknown] for a tombstone). nil traces every object.
//
// The decision is taken once per delta, where its root would start (the
// queue's enqueue; the consumer's expansion of an atomic relist or resync,
// see [StartAtomicObject]; chapter 5's synthetic adds), and then followed:
// a delta that was not selected carries no trace, so HandleDeltas, the
// cache write, distribute and every listener's chain start no span for it.
// A filtered-out object costs one call of the filter, no span start and no
// allocation. The filter is only called when a TracerProvider could record
// at all (tracing.Enabled); with tracing off it is never called.
//
// It is called under the queue's lock or the consumer's, for every object
// that enters the informer: it must be fast and must not call back into the
// informer. Spans that are not per object (the reflector's cycle spans, a
// RealFIFO.ReplacedAll or RealFIFO.SyncAll entry span) are started
// whatever it says.
//
// Not in client-go, which does not trace: ours, so that a user can trace
// the few objects they care about on a big cluster and pay nothing for the
// rest (a traced event costs tens of microseconds).
type TraceFilter func(key string, obj any) bool

// TraceKeys returns a [TraceFilter] that selects the objects with these
// store keys ("namespace/name", or "name" for cluster-scoped objects), and
// nothing else. The keys are copied into a set, so a call is one map
// lookup. No keys select nothing.
//
// Not in client-go (see TraceFilter).
func TraceKeys(keys ...string) TraceFilter {
	set := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		set[k] = struct{}{}
	}
	return func(key string, _ any) bool {
		_, ok := set[key]
		return ok
	}
}

// TraceSelector returns a [TraceFilter] that selects the objects whose
// labels sel matches ([k8s.io/apimachinery/pkg/labels.Selector]). A
// tombstone is judged by the labels of the last state it carries; one
// without an object (its last state unknown) and anything that is not an
// object (no metadata) are not selected. A nil selector selects nothing,
// as [k8s.io/apimachinery/pkg/labels.Nothing] does.
//
// Labels can change: each delta is judged by its own object, so the
// updates after a label was removed are no longer traced (and those after
// it was added are).
//
// Not in client-go (see TraceFilter).
func TraceSelector(sel labels.Selector) TraceFilter {
	if sel == nil {
		sel = labels.Nothing()
	}
	return func(_ string, obj any) bool {
		if t, ok := obj.(DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if obj == nil {
			return false
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return false
		}
		return sel.Matches(labels.Set(m.GetLabels()))
	}
}

// selected applies a queue's filter: true with none.
func selected(filter TraceFilter, key string, obj any) bool {
	return filter == nil || filter(key, obj)
}

// Sources of a delta, the <source> of its root span "ListAndWatch <source>".
const (
	sourceWatch  = "watch"
	sourceList   = "list"
	sourceResync = "resync"
	// sourceWatchList: the object came in a streamed initial state
	// (watch-list), not a LIST; see replaceSource.
	sourceWatchList = "watchlist"
)

// Span options that never change, hoisted so an untraced enqueue allocates
// nothing for them.
var (
	rootKind = trace.WithSpanKind(trace.SpanKindProducer)
	// rootOpts are a root's options when it starts now. No WithNewRoot:
	// a root starts from background, which has no parent to ignore, and
	// the option made the SDK build a context without one for every
	// root, two allocations.
	rootOpts  = []trace.SpanStartOption{rootKind}
	rootNames = map[string]string{sourceWatch: tracing.SpanRootPrefix + sourceWatch, sourceList: tracing.SpanRootPrefix + sourceList,
		sourceResync: tracing.SpanRootPrefix + sourceResync, sourceWatchList: tracing.SpanRootPrefix + sourceWatchList}
	internal   = trace.WithSpanKind(trace.SpanKindInternal)
	consumer   = trace.WithSpanKind(trace.SpanKindConsumer)
	background = context.Background()
)

// startRoot begins the delta's own trace: a root span "ListAndWatch
// <source>" (PRODUCER) covering the hand-off to the queue, linked to the
// reflector's cycle span found in ctx. The root's context and the enqueue
// time travel inside the delta, so whoever pops it can continue the trace;
// nothing is kept in a map or a goroutine-global.
//
// Called only when tracing.Enabled; it returns nil if the queue's
// TraceFilter leaves the object out (then nothing else is done) or the span
// is not sampled.
func (f *DeltaFIFO) startRoot(ctx context.Context, obj, written any, key, source, event string) *deltaTrace {
	if !selected(f.traceFilter, key, obj) {
		return nil
	}
	return startEnqueueTrace(ctx, f.tracer, f.nameAttr, obj, written, key, source, event, &f.ends)
}

// startEnqueueTrace is startRoot for either queue: the DeltaFIFO's deltas
// and the RealFIFO's per-object entries start their traces the same way.
//
// A streamed object's root starts when it arrived on the stream
// (arrivedAt in ctx), so the root spans the wait in the reflector's
// temporary store for the bookmark; every other root starts now.
//
// written is the object as the reflector handed it in, before the
// queue's transform: its traceparent annotation, if any, links the root
// to the write that stamped it (writtenBy).
//
// The root is ended through ends, once the queue's lock is released.
func startEnqueueTrace(ctx context.Context, tracer trace.Tracer, nameAttr attribute.KeyValue, obj, written any, key, source, event string, ends *spanEnds) *deltaTrace {
	start, _ := ctx.Value(arrivedAtKey{}).(time.Time)
	span := startObjectRoot(tracer, nameAttr, trace.SpanContextFromContext(ctx), start, obj, key, source, event, writtenBy(written, source, event))
	if !span.IsRecording() {
		span.End()
		return nil
	}
	now := time.Now()
	ends.add(span, now)
	return &deltaTrace{root: span.SpanContext(), queuedAt: now}
}

// endQueued records, for each of a key's deltas that carries a trace, the
// DeltaFIFO.queued wait span: started at the enqueue time (WithTimestamp),
// ended now, a child of the delta's root. dropped marks a delta that was
// never popped because the informer stopped (informer.queue.dropped).
// It returns how many spans it ended. Each delta reaches it once: Pop
// removes the key before calling it, and endQueuedAsDropped empties the
// queue after, so no wait span is ended twice.
func (f *DeltaFIFO) endQueued(key string, deltas Deltas, dropped bool) int {
	n := 0
	for _, d := range deltas {
		if d.trace == nil {
			continue
		}
		attrs := []attribute.KeyValue{f.nameAttr, tracing.KeyObjectKey.String(tracing.Value(key)), tracing.KeyDeltaType.String(string(d.Type))}
		if dropped {
			attrs = append(attrs, tracing.KeyQueueDropped.Bool(true))
		}
		f.endQueuedSpan(d.trace, attrs)
		for _, m := range d.trace.merged {
			f.endQueuedSpan(m, attrs) // a collapsed delete was a Deleted delta too
		}
		n++
	}
	return n
}

func (f *DeltaFIFO) endQueuedSpan(t *deltaTrace, attrs []attribute.KeyValue) {
	_, span := f.tracer.Start(trace.ContextWithSpanContext(background, t.root), tracing.SpanQueued,
		internal, trace.WithTimestamp(t.queuedAt), trace.WithAttributes(attrs...))
	span.End()
}

// mergeTraces is the trace of a delta that dedupDeltas kept in place of two:
// kept's own, carrying dropped's (and whatever dropped had already taken in)
// in merged. Either may be nil (not sampled).
func mergeTraces(kept, dropped *deltaTrace) *deltaTrace {
	switch {
	case dropped == nil:
		return kept
	case kept == nil:
		return dropped
	}
	kept.merged = append(append(kept.merged, dropped), dropped.merged...)
	dropped.merged = nil
	return kept
}

// RootContext is a context carrying the delta's root span, for a consumer
// that continues its trace; context.Background() when it has none.
func (d Delta) RootContext() context.Context {
	if d.trace == nil {
		return background
	}
	return trace.ContextWithSpanContext(background, d.trace.root)
}

// StartHandleDeltas starts, for each of the deltas popped together for one
// key, its "HandleDeltas" span (CONSUMER): a child of that delta's own root,
// linked to the roots of the others, with informer.deltas.count and
// informer.initial_list. It returns a context per delta (to parent the work
// done for it) and the spans, which the caller ends.
//
// The consumer of chapter 4's informer and chapter 5's HandleDeltas both use
// it, so the coalescing rule of the span contract lives in one place. With
// tracing off it returns nil slices after one check.
func StartHandleDeltas(tracer trace.Tracer, informerName, key string, deltas Deltas, isInInitialList bool) ([]context.Context, []trace.Span) {
	traced := false
	for _, d := range deltas {
		if d.trace != nil {
			traced = true
			break
		}
	}
	if !traced {
		return nil, nil
	}
	// Every root popped here, collapsed deletes included: each HandleDeltas
	// links to all the others.
	var roots []trace.SpanContext
	for _, d := range deltas {
		if d.trace != nil {
			roots = append(roots, d.trace.root)
			for _, m := range d.trace.merged {
				roots = append(roots, m.root)
			}
		}
	}
	linksExcept := func(self trace.SpanContext) []trace.Link {
		links := make([]trace.Link, 0, len(roots)-1)
		for _, r := range roots {
			if !r.Equal(self) {
				links = append(links, trace.Link{SpanContext: r})
			}
		}
		return links
	}
	ctxs := make([]context.Context, len(deltas))
	spans := make([]trace.Span, len(deltas))
	common := []attribute.KeyValue{
		tracing.KeyInformerName.String(informerName), tracing.KeyObjectKey.String(tracing.Value(key)),
		tracing.KeyDeltasCount.Int(len(deltas)), tracing.KeyInitialList.Bool(isInInitialList),
	}
	for i, d := range deltas {
		if d.trace == nil {
			// Not traced (left out by a TraceFilter, or not sampled) while
			// others popped with it are: it has no root to hang a
			// HandleDeltas under, and a span here would be a new trace
			// whose children (cache write, distribute, the listeners'
			// chains) the filter said not to make. A non-recording span
			// keeps the slices aligned for the caller.
			ctxs[i], spans[i] = background, trace.SpanFromContext(background)
			continue
		}
		attrs := append(append([]attribute.KeyValue{}, common...), tracing.KeyDeltaType.String(string(d.Type)))
		ctxs[i], spans[i] = tracer.Start(d.RootContext(), tracing.SpanHandleDeltas, consumer,
			trace.WithLinks(linksExcept(d.trace.root)...), trace.WithAttributes(attrs...))
		for _, m := range d.trace.merged {
			// A collapsed delete has no work of its own (the kept delete
			// does it), so its HandleDeltas ends at once: it shows the
			// delete was popped, with this pop, not lost.
			_, span := tracer.Start(trace.ContextWithSpanContext(background, m.root), tracing.SpanHandleDeltas, consumer,
				trace.WithLinks(linksExcept(m.root)...), trace.WithAttributes(attrs...))
			span.End()
		}
	}
	return ctxs, spans
}

// replaceSource is the <source> of the roots a Replace starts: "watchlist"
// when the reflector streamed the list (it says so in ctx), "list" for a
// LIST's result. A streamed relist's tombstones get "watchlist" too: no
// LIST was made, and a reader who filters on "ListAndWatch list" must not
// find one. arrived is when each listed object arrived on the stream (empty
// unless the reflector traced it).
func replaceSource(ctx context.Context) (source string, arrived []time.Time) {
	if s, ok := reflector.StreamedListFrom(ctx); ok {
		return sourceWatchList, s.Arrived
	}
	return sourceList, nil
}

type arrivedAtKey struct{}

// withArrival returns ctx for enqueueing the i-th object of a streamed
// list: carrying its arrival time, if known, for startEnqueueTrace. Only
// called while tracing (arrived is empty otherwise).
func withArrival(ctx context.Context, arrived []time.Time, i int) context.Context {
	if i >= len(arrived) || arrived[i].IsZero() {
		return ctx
	}
	return context.WithValue(ctx, arrivedAtKey{}, arrived[i])
}

// spanEnds holds spans ended while a queue's lock was held, to be ended for
// real once it is released. Ending a span hands it to the TracerProvider's
// span processors; a synchronous one (sdktrace.WithSyncer, a
// SimpleSpanProcessor) calls the exporter right there, and a blocking batch
// processor waits for room. Under the queue's lock that would make a slow
// collector slow the reflector's every Add and the consumer's every Pop, so
// tracing would no longer cost only its own CPU: a stuck collector could
// stall the informer. Each span keeps the time it was ended at
// (trace.WithTimestamp), so the trace reads exactly as if it had been ended
// under the lock.
//
// Not in client-go, which does not trace.
type spanEnds []pendingEnd

type pendingEnd struct {
	span trace.Span
	at   time.Time
}

// add notes span as ended at the given time (now if zero).
func (e *spanEnds) add(span trace.Span, at time.Time) {
	if at.IsZero() {
		at = time.Now()
	}
	*e = append(*e, pendingEnd{span: span, at: at})
}

// endAll ends every span noted; call it with no lock held.
func (e spanEnds) endAll() {
	for _, p := range e {
		p.span.End(trace.WithTimestamp(p.at))
	}
}
