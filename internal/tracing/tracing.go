//lint:file-ignore SA1019 the deprecated no-op TracerProvider is still handed around; this file checks that it counts as off

// Package tracing holds the names of the span contract (docs/span-contract.md)
// in one place, so every chapter, test and the demo spell them the same way.
package tracing

import (
	"reflect"
	"slices"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Span names of the contract.
const (
	// Cycle spans, one per reflector cycle / request (chapter 3).
	SpanListAndWatchCycle = "Reflector.ListAndWatch"
	SpanList              = "Reflector.list"
	SpanWatch             = "Reflector.watch"
	// SpanWatchList is one streaming request of a watch-list (WATCH with
	// sendInitialEvents=true), from the request to its initial-events-end
	// bookmark or to the failure that ends it.
	SpanWatchList = "Reflector.watchlist"
	// EventWatchListFallback is the cycle span's event when a watch-list
	// gives way to a LIST; KeyFallbackReason says why.
	EventWatchListFallback = "watchlist.fallback"

	// Per-object spans (chapters 4 and 5). The root is "ListAndWatch <source>".
	SpanRootPrefix     = "ListAndWatch "
	SpanQueued         = "DeltaFIFO.queued"
	SpanRealFIFOQueued = "RealFIFO.queued" // SpanQueued's counterpart on the RealFIFO
	SpanHandleDeltas   = "HandleDeltas"
	SpanDistribute     = "distribute"
	SpanAddCh          = "addCh"
	SpanPop            = "pop"
	SpanNextCh         = "nextCh"
	SpanAddEventHandle = "AddEventHandler"
	// The handler call, one name per kind of notification, and the cache
	// write, SpanIndexerPrefix + "Add", "Update" or "Delete".
	SpanOnAdd         = "OnAdd"
	SpanOnUpdate      = "OnUpdate"
	SpanOnDelete      = "OnDelete"
	SpanIndexerPrefix = "Indexer."

	// After the handler: a traced workqueue (package dropin). add is the
	// handler's (or any) Add; delayed the rate limiter's or AddAfter's
	// wait; queued the wait for a worker's Get; process Get to Done.
	SpanWorkqueueAdd     = "workqueue.add"
	SpanWorkqueueDelayed = "workqueue.delayed"
	SpanWorkqueueQueued  = "workqueue.queued"
	SpanWorkqueueProcess = "workqueue.process"
)

// informerWaits are the spans of the informer's per-object path that time
// a wait rather than work: the delta in its queue, the notification on
// the listener's addCh, in its buffer (pop) and on its nextCh.
var informerWaits = []string{SpanQueued, SpanRealFIFOQueued, SpanAddCh, SpanPop, SpanNextCh}

// IsInformerWait reports whether a span named name is one of the
// informer's path, from the queue to the handler, that times a wait rather
// than work: the contract's wait spans but the workqueue's
// (workqueue.delayed, workqueue.queued), which come after the handler.
// Ours: client-go records no spans. It is the one list of the informer's
// waits: the terminal's summary (demo/terminal) counts by it, and the live
// view's page (internal/livepage sends the mark with each span, so app.js
// names no span) marks by [IsWait], which is this list and the
// workqueue's: with a list in each, the page would colour as a wait what
// the summary counts as work once one of them gained a span.
func IsInformerWait(name string) bool { return slices.Contains(informerWaits, name) }

// queueWaits are the traced workqueue's wait spans: the delay a rate
// limiter or AddAfter asked for, and the key's wait for a worker's Get.
var queueWaits = []string{SpanWorkqueueDelayed, SpanWorkqueueQueued}

// IsWait reports whether a span named name times a wait rather than work,
// by the contract's list (docs/span-contract.md, "Wait spans"): the
// informer's ([IsInformerWait]) and the traced workqueue's. The live
// view's page draws waits by it, so that on a controller's own page the
// key's wait for a worker is shaded like the informer's waits; the
// terminal's summary, which is about the informer's path (its longest
// wait, its stages), keeps to IsInformerWait. Ours.
func IsWait(name string) bool { return IsInformerWait(name) || slices.Contains(queueWaits, name) }

// Span names, an event name and attribute keys of the RealFIFO (chapter 4)
// beyond SpanRealFIFOQueued: one span per atomic relist or resync entry,
// which the per-object traces of that entry link to, and the event a
// Bookmark entry leaves on the reflector's cycle span.
const (
	SpanRealFIFOReplacedAll = "RealFIFO.ReplacedAll"
	SpanRealFIFOSyncAll     = "RealFIFO.SyncAll"
	EventRealFIFOBookmark   = "RealFIFO.Bookmark"

	KeyBatchSize = attribute.Key("informer.batch.size")
	KeyListCount = attribute.Key("informer.list.count")
)

// Attribute keys of the contract.
const (
	KeyInformerName    = attribute.Key("informer.name")
	KeyObjectKey       = attribute.Key("informer.object.key")
	KeyEventType       = attribute.Key("informer.event.type")
	KeyResourceVersion = attribute.Key("informer.resource_version")
	KeyDeltaType       = attribute.Key("informer.delta.type")
	KeyDeltasCount     = attribute.Key("informer.deltas.count")
	KeyInitialList     = attribute.Key("informer.initial_list")
	KeyListener        = attribute.Key("informer.listener")
	KeyListenerPending = attribute.Key("informer.listener.pending")
	// KeyQueueDropped is true on a *.queued span ended because the informer
	// stopped before the delta was popped (the contract's "dropped at stop").
	KeyQueueDropped = attribute.Key("informer.queue.dropped")
	KeyNamespace    = attribute.Key("k8s.namespace.name")
	// KeyFallbackReason is the error that made a watch-list fall back to a
	// LIST (on the watchlist.fallback event).
	KeyFallbackReason = attribute.Key("informer.fallback.reason")
	// KeyListItems is on Reflector.list: the items the LIST returned, all
	// its pages together.
	KeyListItems = attribute.Key("informer.list.items")
	// KeyRequestResourceVersion is on Reflector.watchlist: the
	// resourceVersion the stream asked for ("" for the latest), which the
	// bookmark's (KeyResourceVersion) answers.
	KeyRequestResourceVersion = attribute.Key("informer.request.resource_version")

	// The workqueue after the handler (package dropin's traced queue).
	KeyWorkqueueName      = attribute.Key("workqueue.name")
	KeyWorkqueueKey       = attribute.Key("workqueue.key")
	KeyWorkqueueCoalesced = attribute.Key("workqueue.coalesced")
	KeyWorkqueueRequeues  = attribute.Key("workqueue.requeues")
	KeyWorkqueueDepth     = attribute.Key("workqueue.depth")
	// KeyWorkqueuePriority is a controller-runtime priority queue's
	// priority: the one an add asked for, the one GetWithPriority returned.
	KeyWorkqueuePriority = attribute.Key("workqueue.priority")

	// From one controller to the next (AnnotationTraceparent): the link a
	// watch event's root makes to the write that stamped its object
	// carries KeyLinkAnnotation = AnnotationTraceparent, which tells it
	// from the root's link to the reflector's cycle. An annotation that
	// does not parse makes no link; the root gets the event
	// EventTraceparentIgnored, with the value (cut short) in
	// KeyTraceparent.
	KeyLinkAnnotation       = attribute.Key("informer.link.annotation")
	EventTraceparentIgnored = "traceparent.ignored"
	KeyTraceparent          = attribute.Key("informer.traceparent")
)

// Tracer returns the tracer a chapter starts its spans with: from tp, or
// from the global provider when tp is nil (the contract's default). The
// instrumentation name is the chapter's import path.
func Tracer(tp trace.TracerProvider, importPath string) trace.Tracer {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(importPath)
}

// defaultGlobalType is the type of the global TracerProvider before any SDK
// is installed (OTel's internal delegating provider). Captured at init only
// if it is that internal type.
var defaultGlobalType = func() reflect.Type {
	t := reflect.TypeOf(otel.GetTracerProvider())
	if t != nil && t.Kind() == reflect.Pointer && t.Elem().PkgPath() == "go.opentelemetry.io/otel/internal/global" {
		return t
	}
	return nil
}()

// Enabled reports whether spans started from tp (nil: the global provider,
// read now) could record anything: false for OTel's no-op providers and for
// the global provider while no SDK is installed.
//
// Why: a no-op Tracer.Start still builds a context and boxes a span, two
// allocations, which on a path run per delta would make an untraced informer
// slower than client-go's (the contract forbids that). Hot paths ask Enabled
// first and skip span work entirely. It is an atomic load and a type
// comparison, and it follows otel.SetTracerProvider made later.
func Enabled(tp trace.TracerProvider) bool {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	switch sw := tp.(type) {
	case noop.TracerProvider, *noop.TracerProvider:
		return false
	case *Switchable:
		return sw.Enabled()
	}
	t := reflect.TypeOf(tp)
	if t == defaultGlobalType || t == legacyNoopType {
		return false
	}
	return true
}

var legacyNoopType = reflect.TypeOf(trace.NewNoopTracerProvider()) //nolint:staticcheck // the deprecated no-op is still handed around
