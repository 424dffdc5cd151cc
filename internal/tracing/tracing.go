// Package tracing holds the names of the span contract (../shared/span-contract.md)
// in one place, so every chapter, test and the demo spell them the same way.
package tracing

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Span names of the contract.
const (
	// Cycle spans, one per reflector cycle / request (chapter 3).
	SpanListAndWatchCycle = "Reflector.ListAndWatch"
	SpanList              = "Reflector.list"
	SpanWatch             = "Reflector.watch"

	// Per-object spans (chapters 4 and 5). The root is "ListAndWatch <source>".
	SpanRootPrefix     = "ListAndWatch "
	SpanQueued         = "DeltaFIFO.queued"
	SpanHandleDeltas   = "HandleDeltas"
	SpanDistribute     = "distribute"
	SpanAddCh          = "addCh"
	SpanPop            = "pop"
	SpanNextCh         = "nextCh"
	SpanAddEventHandle = "AddEventHandler"
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
	KeyNamespace       = attribute.Key("k8s.namespace.name")
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
