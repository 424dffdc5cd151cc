package kit

import (
	"context"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// Spans records every span of a tracer provider in memory.
type Spans struct {
	rec *tracetest.SpanRecorder
	tp  *sdktrace.TracerProvider
}

// NewSpans returns an empty recorder with its own tracer provider.
func NewSpans() *Spans {
	rec := tracetest.NewSpanRecorder()
	return &Spans{rec: rec, tp: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))}
}

// Provider is the tracer provider to give an informer, queue or reflector.
func (s *Spans) Provider() trace.TracerProvider { return s.tp }

// Shutdown flushes and stops the provider.
func (s *Spans) Shutdown() { _ = s.tp.Shutdown(context.Background()) }

// Ended returns every span ended so far, in the order they ended.
func (s *Spans) Ended() []sdktrace.ReadOnlySpan { return s.rec.Ended() }

// Named returns the ended spans called name whose informer.object.key is key
// (any key when key is "").
func (s *Spans) Named(name, key string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, sp := range s.rec.Ended() {
		if sp.Name() == name && (key == "" || Attr(sp, "informer.object.key") == key) {
			out = append(out, sp)
		}
	}
	return out
}

// InTrace returns the ended spans of the trace of sp, ordered by start time.
func (s *Spans) InTrace(sp sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, x := range s.rec.Ended() {
		if x.SpanContext().TraceID() == sp.SpanContext().TraceID() {
			out = append(out, x)
		}
	}
	slices.SortStableFunc(out, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	return out
}

// Attr returns the value of attribute key on sp as a string ("" if absent).
func Attr(sp sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range sp.Attributes() {
		if kv.Key == attribute.Key(key) {
			return kv.Value.String()
		}
	}
	return ""
}

// Duration is how long sp lasted.
func Duration(sp sdktrace.ReadOnlySpan) time.Duration { return sp.EndTime().Sub(sp.StartTime()) }
