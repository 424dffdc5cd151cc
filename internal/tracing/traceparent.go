package tracing

import (
	"context"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// AnnotationTraceparent is the annotation that carries, on an object, the
// span context of the write that made it: a W3C traceparent
// ("00-<trace id>-<span id>-<flags>"). The key is the one KEP-5915's draft
// (sig-instrumentation, "Standardizing Async Trace Context Propagation",
// open) proposes, and the one ovn-kubernetes already reads (it links its
// reconciles to the span it names); the draft may still change it. docs/span-contract.md, "From one controller to the
// next", says what this project does with it.
//
// Ours: client-go reads no annotation.
const AnnotationTraceparent = "tracing.k8s.io/traceparent"

// traceparentHeader is the key OTel's W3C propagator reads and writes: the
// HTTP header's name, which the annotation's value is the value of.
const traceparentHeader = "traceparent"

// maxIgnoredValue bounds the part of an unparsable annotation put on a
// span: a well-formed traceparent is 55 bytes, and an annotation can be up
// to 256 KiB, which no span should carry (nor keep alive: see Cut).
const maxIgnoredValue = 64

var (
	w3c = propagation.TraceContext{}

	// ignoredTraceparents counts annotations that were present and did not
	// parse, for tests and the live view (TraceparentsIgnored).
	ignoredTraceparents atomic.Uint64
)

// traceparentCarrier is a propagation.TextMapCarrier holding one value,
// the traceparent, and nothing else: no tracestate, no baggage.
type traceparentCarrier struct{ value string }

func (c *traceparentCarrier) Get(key string) string {
	if key == traceparentHeader {
		return c.value
	}
	return ""
}

func (c *traceparentCarrier) Set(key, value string) {
	if key == traceparentHeader {
		c.value = value
	}
}

func (c *traceparentCarrier) Keys() []string { return []string{traceparentHeader} }

// Traceparent reads obj's [AnnotationTraceparent]. present is false when
// obj has no such annotation (or is not an object with metadata); then
// nothing else is said. When it is present and parses, sc is the span
// context it names (valid, remote); white space around the value is
// trimmed first (a YAML block scalar leaves a newline at its end, which the
// W3C format does not allow but nobody means). When it is present and does
// not parse (an empty value included), sc is invalid, ignored is the value
// made safe for a span event ([Cut] to 64 bytes: valid UTF-8, no control
// character, a copy) and the ignored-annotations counter
// ([TraceparentsIgnored]) goes up by one: bad input in an annotation anyone
// can write is never an error for the informer.
//
// Ours (the parsing is OTel's W3C propagator, given the value as its
// traceparent header).
func Traceparent(obj any) (sc trace.SpanContext, ignored string, present bool) {
	value, ok := traceparentOf(obj)
	if !ok {
		return trace.SpanContext{}, "", false
	}
	sc = trace.SpanContextFromContext(w3c.Extract(context.Background(), &traceparentCarrier{value: strings.TrimSpace(value)}))
	if !sc.IsValid() {
		ignoredTraceparents.Add(1)
		// Never value[:64]: that can split a character (and an invalid
		// attribute fails the OTLP export of every span batched with
		// it), and it keeps the whole annotation alive for as long as
		// the span is held. Cut says more.
		return trace.SpanContext{}, Cut(value, maxIgnoredValue), true
	}
	return sc, "", true
}

// traceparentOf is obj's AnnotationTraceparent value, if it has one. An
// *unstructured.Unstructured (a CRD's object on a dynamic informer, or
// controller-runtime's unstructured cache) is read in place: its
// GetAnnotations builds a new map of every annotation on each call, and
// with tracing on this runs for every watched object, sampled or not: a
// map allocated and filled per event, to look at one key.
//
// Differs from GetAnnotations on malformed input only: an annotations map
// holding a value that is not a string makes GetAnnotations return none at
// all; here only our key's value is looked at (an API server never serves
// such a map: annotations are validated as strings).
func traceparentOf(obj any) (string, bool) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		md, _ := u.Object["metadata"].(map[string]any)
		annotations, _ := md["annotations"].(map[string]any)
		v, ok := annotations[AnnotationTraceparent].(string)
		return v, ok
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", false
	}
	v, ok := m.GetAnnotations()[AnnotationTraceparent]
	return v, ok
}

// FormatTraceparent returns sc as a W3C traceparent, the value of an
// [AnnotationTraceparent]; "" when sc is not valid.
//
// Ours.
func FormatTraceparent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	var c traceparentCarrier
	w3c.Inject(trace.ContextWithSpanContext(context.Background(), sc), &c)
	return c.value
}

// TraceparentsIgnored is how many [AnnotationTraceparent] values present
// on objects have not parsed since the process started (the informer
// ignored each one, and made no link for it).
func TraceparentsIgnored() uint64 { return ignoredTraceparents.Load() }
