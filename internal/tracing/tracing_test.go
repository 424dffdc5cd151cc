//lint:file-ignore SA1019 the deprecated no-op TracerProvider is still handed around; this file checks that it counts as off

package tracing

import (
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

func TestEnabled(t *testing.T) {
	if Enabled(nil) {
		t.Fatal("the global provider with no SDK installed must count as off")
	}
	if Enabled(noop.NewTracerProvider()) || Enabled(trace.NewNoopTracerProvider()) { //nolint:staticcheck
		t.Fatal("no-op providers must count as off")
	}
	sdk := sdktrace.NewTracerProvider()
	if !Enabled(sdk) {
		t.Fatal("an SDK provider is on")
	}
	// Installing an SDK globally later turns the global provider on.
	old := otel.GetTracerProvider()
	otel.SetTracerProvider(sdk)
	defer otel.SetTracerProvider(old)
	if !Enabled(nil) {
		t.Fatal("the global provider with an SDK installed is on")
	}
}

// The informer's waits are the queue's and the listener's, not the work
// around them nor the workqueue's after the handler.
func TestIsInformerWait(t *testing.T) {
	for _, wait := range []string{SpanQueued, SpanRealFIFOQueued, SpanAddCh, SpanPop, SpanNextCh} {
		if !IsInformerWait(wait) {
			t.Errorf("IsInformerWait(%q) is false: it times a wait", wait)
		}
	}
	for _, work := range []string{SpanHandleDeltas, SpanDistribute, SpanOnAdd, SpanIndexerPrefix + "Add", SpanRootPrefix + "watch",
		SpanWorkqueueQueued, SpanWorkqueueDelayed, ""} {
		if IsInformerWait(work) {
			t.Errorf("IsInformerWait(%q) is true: not a wait of the informer's path", work)
		}
	}
}

// IsWait is the contract's whole list: the informer's waits and the traced
// workqueue's, and nothing that does work.
func TestIsWait(t *testing.T) {
	for _, wait := range []string{SpanQueued, SpanRealFIFOQueued, SpanAddCh, SpanPop, SpanNextCh, SpanWorkqueueDelayed, SpanWorkqueueQueued} {
		if !IsWait(wait) {
			t.Errorf("IsWait(%q) is false: it times a wait", wait)
		}
	}
	for _, work := range []string{SpanHandleDeltas, SpanDistribute, SpanOnAdd, SpanWorkqueueAdd, SpanWorkqueueProcess, SpanRootPrefix + "watch", ""} {
		if IsWait(work) {
			t.Errorf("IsWait(%q) is true: it does work", work)
		}
	}
}
