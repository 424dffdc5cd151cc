package tracing

import (
	"context"
	"reflect"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// Switchable is a TracerProvider whose target can be chosen after tracers
// have been handed out. The chapters take their TracerProvider when an
// informer is built and keep the tracers they get from it; package dropin
// has to build the informer inside client-go's constructor signatures, which
// have no room for a provider, and lets the caller name one afterwards
// (before Run). Handing the chapters a Switchable makes that possible without
// rebuilding anything.
//
// Until [Switchable.Set] is called it follows the global provider, as an
// informer built with no provider does. [Enabled] looks through it, so an
// informer on a Switchable that points at a no-op costs what one built with
// the no-op costs.
//
// Ours: nothing in client-go traces.
type Switchable struct {
	embedded.TracerProvider
	// target is nil (follow the global provider) or the provider set.
	target atomic.Pointer[trace.TracerProvider]
	// fixed caches Enabled(target) for a target that cannot change its
	// mind (anything but the global delegate): -1 unknown, 0 off, 1 on.
	fixed atomic.Int32
}

// Set points every tracer handed out by s, earlier or later, at tp; nil
// goes back to the global provider.
func (s *Switchable) Set(tp trace.TracerProvider) {
	s.fixed.Store(-1)
	if tp == nil {
		s.target.Store(nil)
		return
	}
	s.target.Store(&tp)
	if reflect.TypeOf(tp) != defaultGlobalType {
		if Enabled(tp) {
			s.fixed.Store(1)
		} else {
			s.fixed.Store(0)
		}
	}
}

// Enabled is [Enabled] of the current target, in two atomic loads when a
// provider was set (the traced workqueue asks it on every Add; small enough
// to be inlined there).
func (s *Switchable) Enabled() bool {
	if f := s.fixed.Load(); f >= 0 && s.target.Load() != nil {
		return f == 1
	}
	return s.enabledNow()
}

// enabledNow is Enabled's slow path, kept out of line so Enabled inlines.
func (s *Switchable) enabledNow() bool { return Enabled(s.Current()) }

// Current is the provider s forwards to now.
func (s *Switchable) Current() trace.TracerProvider {
	if p := s.target.Load(); p != nil {
		return *p
	}
	return otel.GetTracerProvider()
}

// Tracer returns a tracer that asks s for its target at every Start, so a
// later Set takes effect on it.
func (s *Switchable) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return &switchTracer{s: s, name: name, opts: opts}
}

type switchTracer struct {
	embedded.Tracer
	s    *Switchable
	name string
	opts []trace.TracerOption
	// last caches the tracer of the last provider seen: asking an SDK
	// provider for a tracer takes its lock, which every span would pay.
	last atomic.Pointer[resolved]
}

type resolved struct {
	tp     trace.TracerProvider
	tracer trace.Tracer
}

func (t *switchTracer) Start(ctx context.Context, spanName string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	tp := t.s.Current()
	r := t.last.Load()
	if r == nil || !sameProvider(r.tp, tp) {
		r = &resolved{tp: tp, tracer: tp.Tracer(t.name, t.opts...)}
		t.last.Store(r)
	}
	return r.tracer.Start(ctx, spanName, opts...)
}

// sameProvider is a == b without the panic == gives on providers whose
// dynamic type is not comparable (a struct holding a func or a map): those
// are never taken to be the same, which only costs a fresh Tracer call.
func sameProvider(a, b trace.TracerProvider) bool {
	if a == nil || b == nil {
		return a == b
	}
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}
