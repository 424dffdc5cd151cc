package dropin

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informer-anatomy/informer-anatomy/internal/handlerctx"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// ReconcileContext returns ctx carrying the workqueue.process span of the
// key the calling goroutine is reconciling, from a traced queue's Get to its
// Done, so the spans the reconcile starts from it (its own, an otelhttp
// transport's for each API request) are that span's children and the
// object's trace goes on through them:
//
//	func (c *Controller) processNextItem(ctx context.Context) bool {
//		key, shutdown := c.queue.Get()
//		...
//		defer c.queue.Done(key)
//		return c.sync(dropin.ReconcileContext(ctx), key)
//	}
//
// In controller-runtime, call it at the top of Reconcile: its workers call
// the queue's Get, then Reconcile, then Done on one goroutine
// (pkg/internal/controller/controller.go, processNextWorkItem).
//
// The span is found through the goroutine (internal/handlerctx), as the
// traced queue finds a handler call, because neither Get nor a Reconcile's
// context carries it. So it must be called on the goroutine that called
// Get, between Get and Done; work handed to another goroutine takes the
// returned ctx along. Called from inside a traced handler call it returns
// the handler call's span, the other traced call the registry knows.
//
// ctx comes back unchanged when nothing is registered (tracing off, or not
// between a traced Get and Done: one atomic load), and when it already
// carries a span of that trace (a span the reconcile started under the
// process span stays the parent of what follows). Otherwise the returned
// ctx carries the process span in place of any span ctx had; for a key
// whose change was left out of the traces (its root dropped by the
// sampler, or its object by the trace filter), a span context that is not
// sampled, so that a ParentBased sampler drops the reconcile's spans too
// rather than start traces of their own: a trace is whole or absent.
//
// Ours: client-go's workqueue does not trace.
func ReconcileContext(ctx context.Context) context.Context {
	sc, ok := handlerctx.Current()
	if !ok || !sc.IsValid() {
		return ctx
	}
	if cur := trace.SpanContextFromContext(ctx); cur.IsValid() && cur.TraceID() == sc.TraceID() {
		return ctx
	}
	return trace.ContextWithSpanContext(ctx, sc)
}

// StampTraceparent writes the span context of the reconcile in ctx on obj,
// an object the reconcile is about to create or update, in the annotation
// tracing.k8s.io/traceparent (a W3C traceparent,
// "00-<trace id>-<span id>-<flags>"). The informers of the next controller
// then link the watch event of this write to that span
// (docs/span-contract.md, "From one controller to the next"), so a change
// can be followed from one controller to the next. The span is ctx's; when
// ctx carries none, the one [ReconcileContext] would give.
//
// It reports whether it stamped. With no valid span (tracing off, or not in
// a traced reconcile) it leaves obj as it was, as KEP-5915's draft's
// InjectContext does: an annotation already there stays, and names the
// write that put it there.
//
// Stamp a copy, never an object from an informer's cache (the cache is
// shared and must not change under its readers), and stamp writes that
// are decisions (creating an object, changing its spec), not status
// reports: KEP-5915's draft draws that line.
//
// Ours. It follows KEP-5915's draft (sig-instrumentation, "Standardizing
// Async Trace Context Propagation", open) in the annotation's key and
// format and in asking readers for a link, not a parent; it writes the
// traceparent only (the draft's InjectContext writes whatever keys the
// propagator it is given writes, each under the prefix tracing.k8s.io/:
// with OTel's W3C propagator, a tracestate too when the span has one).
func StampTraceparent(ctx context.Context, obj metav1.Object) bool {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		sc = trace.SpanContextFromContext(ReconcileContext(ctx))
	}
	value := tracing.FormatTraceparent(sc)
	if value == "" {
		return false
	}
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = make(map[string]string, 1)
	}
	annotations[tracing.AnnotationTraceparent] = value
	obj.SetAnnotations(annotations)
	return true
}
