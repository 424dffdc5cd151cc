package deltafifo

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// From one controller to the next (docs/span-contract.md): a controller's
// reconcile that writes an object can stamp it with its span's context, in
// the annotation tracing.k8s.io/traceparent (KEP-5915's draft; the dropin
// package's StampTraceparent). When another informer receives the write
// as a watch event, the event's root links to that span: a link, not a
// parent, because the writer's trace ended long before (its reconcile
// returned) and the two traces have lives of their own. Ours: client-go
// does not trace.

// writer is what an object's traceparent annotation said: present or not,
// and, if present, the span context it names (sc; invalid when it did not
// parse, and ignored is then the value, cut short).
type writer struct {
	sc      trace.SpanContext
	ignored string
	present bool
}

// writerLinkAttrs tells the root's link to the writer from its link to the
// reflector's cycle. Hoisted: the same for every link.
var writerLinkAttrs = []attribute.KeyValue{tracing.KeyLinkAnnotation.String(tracing.AnnotationTraceparent)}

// writtenBy reads the traceparent annotation of obj, as it came from the
// reflector, for a root of the given source and event. Only a watch event
// that adds or modifies an object asks:
//
//   - A listed, streamed or resynced object (and a relist's tombstone) is
//     state, not a write happening now: its annotation names whoever
//     stamped it last, possibly days ago, and an informer's start or
//     relist would link every object to traces long gone. A write that
//     happened while the watch was down and reaches the informer in a
//     relist loses its link: the price of that rule.
//   - A DELETED event's object is the last state before the delete. A
//     DELETE request has no body, so the deleter cannot stamp it: the
//     annotation names the last writer, who did not cause the delete.
//
// A MODIFIED event made by a writer that does not stamp (a status update,
// say) still carries the annotation of the last writer that did, and links
// to it: the annotation cannot tell. KEP-5915's draft has the same
// property ("Multiple Writers") and asks writers to stamp every decision.
//
// Called only while tracing (under the queue's lock): with no annotation
// it costs a map lookup.
func writtenBy(obj any, source, event string) writer {
	if source != sourceWatch || event == "DELETED" {
		return writer{}
	}
	sc, ignored, present := tracing.Traceparent(obj)
	return writer{sc: sc, ignored: ignored, present: present}
}
