package dropin

import (
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// LinkAwareSampler returns a sampler that lets the controller that wrote
// an object decide whether the trace of its change is kept here too, so
// that a trace kept by one controller goes on in the next one at any
// sampling ratio, and one dropped there stays dropped here.
//
// A change the informer receives as a watch event, on an object stamped
// with tracing.k8s.io/traceparent ([StampTraceparent]), starts its root
// "ListAndWatch watch" with a link to the writer's span
// (docs/span-contract.md, "From one controller to the next"), given at
// the start so that the sampler sees it in SamplingParameters.Links. For
// such a root, a span with no parent and a writer's link, the sampler
// follows the writer's sampled flag: sampled, the root is recorded and
// sampled; not sampled, it is dropped. For every other span it asks
// inner: a root of a change no writer stamped is inner's to decide,
// and a child follows its parent if inner is ParentBased, as it should be
// (sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.01)), say).
//
// Each controller samples on its own otherwise: with 1% in A and 1% in B,
// a change A kept is kept by B once in a hundred, and B's kept traces link
// to A's spans that were never recorded (issue 37: 1 of 24 did).
//
// Give it to every TracerProvider whose informers read the annotation:
//
//	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(
//		dropin.LinkAwareSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.01)))))
//
// Ours. KEP-5915's draft (sig-instrumentation, kubernetes/enhancements
// #5916, open) propagates the writer's context in the annotation and asks
// readers for a link, not a parent, as we do; its review asks for a
// custom sampler that samples on whether the span's links were sampled,
// so that linked trees are whole, sampled or not (dashpole, 2026-02-12).
// This is such a sampler, for the one link that names a writer. Where the draft's reader makes that link on the
// reconcile's span, ours is on the informer's root, so the decision
// covers the informer's spans, the queue's and the reconcile's alike.
func LinkAwareSampler(inner sdktrace.Sampler) sdktrace.Sampler {
	return linkAwareSampler{inner: inner}
}

type linkAwareSampler struct{ inner sdktrace.Sampler }

// ShouldSample is sdktrace.Sampler's.
func (s linkAwareSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	parent := trace.SpanContextFromContext(p.ParentContext)
	if !parent.IsValid() {
		for _, l := range p.Links {
			if !isWriterLink(l) {
				continue
			}
			decision := sdktrace.Drop
			if l.SpanContext.IsSampled() {
				decision = sdktrace.RecordAndSample
			}
			return sdktrace.SamplingResult{Decision: decision, Tracestate: parent.TraceState()}
		}
	}
	return s.inner.ShouldSample(p)
}

// Description is sdktrace.Sampler's.
func (s linkAwareSampler) Description() string {
	return "LinkAwareSampler{" + s.inner.Description() + "}"
}

// isWriterLink: the link chapter 4 makes from a root to the writer its
// object's annotation names (informer.link.annotation =
// tracing.k8s.io/traceparent).
func isWriterLink(l trace.Link) bool {
	if !l.SpanContext.IsValid() {
		return false
	}
	for _, a := range l.Attributes {
		if a.Key == tracing.KeyLinkAnnotation && a.Value.Type() == attribute.STRING && a.Value.AsString() == tracing.AnnotationTraceparent {
			return true
		}
	}
	return false
}
