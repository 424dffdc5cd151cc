package deltafifo

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// The RealFIFO's side of the span contract (docs/span-contract.md,
// "On the RealFIFO"). A per-object entry is traced as on the DeltaFIFO: a
// root at enqueue, a RealFIFO.queued wait span made when it is popped. An
// atomic entry (ReplacedAll, SyncAll) holds many objects but is one queue
// entry, and the tombstones of a relist are only found when the consumer
// processes it; so the queue traces the entry (one span in the reflector
// cycle's trace, open from enqueue to pop) and the consumer makes each
// object's own trace with StartAtomicObject, back-dated to the enqueue.

// atomicTrace is what a traced ReplacedAll or SyncAll entry carries besides
// its deltaTrace: the entry's span, ended when it is popped (or dropped),
// and when that was, which ends every per-object wait made for it.
type atomicTrace struct {
	entry    trace.Span
	poppedAt time.Time
	// filter is the queue's TraceFilter, carried with the entry to where
	// its objects' traces are made (StartAtomicObject, in the consumer):
	// the objects of a SyncAll, and a relist's tombstones, are only known
	// there.
	filter TraceFilter
	// source is the <source> of the roots of a ReplacedAll's objects
	// ("list", or "watchlist" for a streamed list); arrived, for a streamed
	// one, when each key arrived on the stream. Both are the entry's own
	// data, carried to where the per-object roots are made.
	source  string
	arrived map[string]time.Time
}

// startObjectRoot starts an object's root span "ListAndWatch <source>"
// (PRODUCER, a new trace) linked to link, at start (now if zero), with the
// contract's root attributes. The caller ends it. Shared by the per-object
// entries (linked to the reflector's cycle) and the per-object traces of an
// atomic entry (linked to the entry's span). w is what the object's
// traceparent annotation said (writtenBy; zero: nothing to add).
func startObjectRoot(tracer trace.Tracer, nameAttr attribute.KeyValue, link trace.SpanContext, start time.Time, obj any, key, source, event string, w writer) trace.Span {
	// Every object's root asks the sampler, and with a ratio sampler
	// nearly all of them are dropped: what is built before Start is paid
	// for the dropped ones too. So a root that starts now passes the one
	// hoisted option slice (the variadic call copies nothing), and the
	// link to the cycle is added once the span records, not given to
	// Start (WithLinks cost two allocations a root, sampled or not). The
	// link to a writer is the exception: it is given to Start, so that the
	// sampler sees it (SamplingParameters.Links) and can keep the trace
	// of a change whose writer's trace was kept (dropin.LinkAwareSampler),
	// paid only by the events whose object names a writer.
	opts := rootOpts
	if !start.IsZero() {
		opts = []trace.SpanStartOption{rootKind, trace.WithTimestamp(start)}
	}
	if w.sc.IsValid() {
		opts = append(opts[:len(opts):len(opts)], trace.WithLinks(trace.Link{SpanContext: w.sc, Attributes: writerLinkAttrs}))
	}
	_, span := tracer.Start(background, rootNames[source], opts...)
	if !span.IsRecording() {
		return span
	}
	if link.IsValid() {
		span.AddLink(trace.Link{SpanContext: link})
	}
	span.SetAttributes(nameAttr, tracing.KeyObjectKey.String(tracing.Value(key)), tracing.KeyEventType.String(event))
	if w.present && !w.sc.IsValid() {
		span.AddEvent(tracing.EventTraceparentIgnored, trace.WithAttributes(tracing.KeyTraceparent.String(w.ignored)))
	}
	if t, ok := obj.(DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if m, err := meta.Accessor(obj); err == nil {
		span.SetAttributes(tracing.KeyResourceVersion.String(tracing.Value(m.GetResourceVersion())))
		if ns := m.GetNamespace(); ns != "" {
			span.SetAttributes(tracing.KeyNamespace.String(tracing.Value(ns)))
		}
	}
	return span
}

// startEventRoot begins a per-object entry's trace at enqueue, as
// DeltaFIFO.startRoot does; nil if the queue's TraceFilter leaves the
// object out or it is not sampled. Called only when tracing.Enabled.
func (f *RealFIFO) startEventRoot(ctx context.Context, obj, written any, key, source, event string) *deltaTrace {
	if !selected(f.traceFilter, key, obj) {
		return nil
	}
	return startEnqueueTrace(ctx, f.tracer, f.nameAttr, obj, written, key, source, event, &f.ends)
}

// startAtomicEntry starts the span of a ReplacedAll or SyncAll entry,
// RealFIFO.ReplacedAll or RealFIFO.SyncAll (INTERNAL), a child of the
// reflector's cycle span in ctx; it stays open until the entry is popped.
// nil if it is not sampled. Called only when tracing.Enabled.
//
// The entry span is started whatever the queue's TraceFilter would say of
// the objects in it: it is one span per relist or resync, not per object
// (like the reflector's cycle spans), and which of its objects are selected
// is only known while the consumer expands it (a SyncAll's objects and a
// relist's tombstones come from the consumer's cache). Asking the filter
// here as well would call it twice per listed object to save one span per
// relist. The filter travels with the entry to StartAtomicObject.
func (f *RealFIFO) startAtomicEntry(ctx context.Context, typ DeltaType, listed int, resourceVersion string) *deltaTrace {
	name := tracing.SpanRealFIFOSyncAll
	if typ == ReplacedAll {
		name = tracing.SpanRealFIFOReplacedAll
	}
	_, span := f.tracer.Start(ctx, name, internal)
	if !span.IsRecording() {
		span.End()
		return nil
	}
	span.SetAttributes(f.nameAttr, tracing.KeyDeltaType.String(string(typ)))
	if typ == ReplacedAll {
		span.SetAttributes(tracing.KeyListCount.Int(listed), tracing.KeyResourceVersion.String(tracing.Value(resourceVersion)))
	}
	return &deltaTrace{root: span.SpanContext(), queuedAt: time.Now(), atomic: &atomicTrace{entry: span, filter: f.traceFilter}}
}

// endWait ends a traced entry's wait in the queue, now: for a per-object
// entry its RealFIFO.queued span (started back at the enqueue, a child of
// its root), for an atomic entry the entry's span. dropped marks an entry
// that was never popped because the informer stopped.
func (f *RealFIFO) endWait(d Delta, dropped bool) {
	if a := d.trace.atomic; a != nil {
		a.poppedAt = time.Now()
		if dropped {
			a.entry.SetAttributes(tracing.KeyQueueDropped.Bool(true))
		}
		f.ends.add(a.entry, a.poppedAt)
		return
	}
	key, _ := f.KeyOf(d.Object)
	attrs := []attribute.KeyValue{f.nameAttr, tracing.KeyObjectKey.String(tracing.Value(key)), tracing.KeyDeltaType.String(string(d.Type))}
	if dropped {
		attrs = append(attrs, tracing.KeyQueueDropped.Bool(true))
	}
	_, span := f.tracer.Start(trace.ContextWithSpanContext(background, d.trace.root), tracing.SpanRealFIFOQueued,
		internal, trace.WithTimestamp(d.trace.queuedAt), trace.WithAttributes(attrs...))
	f.ends.add(span, time.Time{})
}

// bookmarkEvent records a queued Bookmark entry as an event on the
// reflector's cycle span: a bookmark changes no object, so it gets no trace.
func (f *RealFIFO) bookmarkEvent(ctx context.Context, resourceVersion string) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent(tracing.EventRealFIFOBookmark, trace.WithAttributes(f.nameAttr, tracing.KeyResourceVersion.String(tracing.Value(resourceVersion))))
	}
}

// StartAtomicObject starts, for one object of a popped ReplacedAll or
// SyncAll entry, its own trace as the span contract says: a root
// "ListAndWatch list|resync" (event LISTED, TOMBSTONE or RESYNC) and a
// RealFIFO.queued span, both starting when the entry was queued, the queued
// span ending when it was popped, the root linked to the entry's
// RealFIFO.ReplacedAll/SyncAll span; then the HandleDeltas span (child of
// the root, informer.delta.type = entry type, informer.deltas.count=1,
// informer.initial_list). Returns the HandleDeltas context and span (caller
// ends it), or (context.Background(), nil) when the entry is not traced or
// the queue's [TraceFilter] leaves this object out: the filter is asked
// here, once per object of the entry (obj is the listed object, the
// cached one for a resync, or the [DeletedFinalStateUnknown] of a
// tombstone).
//
// The consumer calls it while processing the entry (chapter 4's controller
// and chapter 5's HandleDeltas), because only then are the tombstones
// known. Not in client-go, which does not trace.
func StartAtomicObject(tracer trace.Tracer, informerName string, entry Delta, key string, obj any, event string, isInInitialList bool) (context.Context, trace.Span) {
	if entry.trace == nil || entry.trace.atomic == nil {
		return background, nil
	}
	t := entry.trace
	if !selected(t.atomic.filter, key, obj) {
		return background, nil
	}
	poppedAt := t.atomic.poppedAt
	if poppedAt.IsZero() {
		// Not popped yet (a misuse): end the wait now rather than at year 1.
		poppedAt = time.Now()
	}
	source, start := sourceList, t.queuedAt
	switch {
	case entry.Type == SyncAll:
		source = sourceResync
	case t.atomic.source != "":
		source = t.atomic.source
		if at, ok := t.atomic.arrived[key]; ok {
			// A streamed object's root starts when it arrived: it waited
			// in the reflector's temporary store for the bookmark.
			start = at
		}
	}
	nameAttr := tracing.KeyInformerName.String(informerName)
	// No writer's link: these objects were listed, resynced or lost, not
	// written now (writtenBy says why).
	root := startObjectRoot(tracer, nameAttr, t.root, start, obj, key, source, event, writer{})
	recording := root.IsRecording()
	// The hand-off to the queue was the entry's enqueue: the root covers
	// that instant, as a per-object root covers its own enqueue.
	root.End(trace.WithTimestamp(t.queuedAt))
	if !recording {
		return background, nil
	}
	rootCtx := trace.ContextWithSpanContext(background, root.SpanContext())
	deltaType := tracing.KeyDeltaType.String(string(entry.Type))
	keyAttr := tracing.KeyObjectKey.String(tracing.Value(key))
	_, queued := tracer.Start(rootCtx, tracing.SpanRealFIFOQueued, internal, trace.WithTimestamp(t.queuedAt),
		trace.WithAttributes(nameAttr, keyAttr, deltaType))
	queued.End(trace.WithTimestamp(poppedAt))
	return tracer.Start(rootCtx, tracing.SpanHandleDeltas, consumer, trace.WithAttributes(
		nameAttr, keyAttr, deltaType,
		tracing.KeyDeltasCount.Int(1), tracing.KeyInitialList.Bool(isInInitialList)))
}

// StartHandleDeltasInBatch starts the HandleDeltas span (CONSUMER) of one
// delta handled in a RealFIFO batch of batchSize deltas: a child of the
// delta's root, with informer.deltas.count=1 (the RealFIFO never
// coalesces) and informer.batch.size. Returns its context and span (caller
// ends it), or (context.Background(), nil) when the delta is not traced. A
// delta popped alone is StartHandleDeltas's.
//
// Not in client-go, which does not trace.
func StartHandleDeltasInBatch(tracer trace.Tracer, informerName, key string, d Delta, batchSize int, isInInitialList bool) (context.Context, trace.Span) {
	if d.trace == nil {
		return background, nil
	}
	return tracer.Start(d.RootContext(), tracing.SpanHandleDeltas, consumer, trace.WithAttributes(
		tracing.KeyInformerName.String(informerName), tracing.KeyObjectKey.String(tracing.Value(key)),
		tracing.KeyDeltaType.String(string(d.Type)), tracing.KeyDeltasCount.Int(1),
		tracing.KeyBatchSize.Int(batchSize), tracing.KeyInitialList.Bool(isInInitialList)))
}

// streamedArrivals returns the <source> of a ReplacedAll's per-object roots
// and, for a streamed list, each object's arrival by key (the consumer
// knows an object by its key when it makes its root; the list's order is
// not the processing order of a relist's tombstones and objects).
func (f *RealFIFO) streamedArrivals(ctx context.Context, list []any) (string, map[string]time.Time) {
	source, arrived := replaceSource(ctx)
	if len(arrived) == 0 {
		return source, nil
	}
	byKey := make(map[string]time.Time, len(arrived))
	for i, obj := range list {
		if i >= len(arrived) {
			break
		}
		if key, err := f.KeyOf(obj); err == nil {
			byKey[key] = arrived[i]
		}
	}
	return source, byKey
}
