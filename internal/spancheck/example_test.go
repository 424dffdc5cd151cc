package spancheck_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// Read what the stdouttrace exporter wrote and check each handler call's
// chain. This chain goes straight from distribute to the handler: the
// listener's addCh, pop and nextCh spans are missing, and Check says so.
func ExampleReadStdoutTrace() {
	var file bytes.Buffer
	exp, _ := stdouttrace.New(stdouttrace.WithWriter(&file))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tr := tp.Tracer("example")
	attrs := trace.WithAttributes(tracing.KeyInformerName.String("pods"), tracing.KeyObjectKey.String("ns/a"),
		tracing.KeyListener.String("h#0"), tracing.KeyEventType.String("ADDED"))
	ctx := context.Background()
	var spans []trace.Span
	for _, s := range []struct {
		name string
		kind trace.SpanKind
	}{{"ListAndWatch watch", trace.SpanKindProducer}, {"HandleDeltas", trace.SpanKindConsumer},
		{"distribute", trace.SpanKindInternal}, {"OnAdd", trace.SpanKindConsumer}} {
		var span trace.Span
		ctx, span = tr.Start(ctx, s.name, attrs, trace.WithSpanKind(s.kind))
		spans = append(spans, span)
	}
	for _, s := range slices.Backward(spans) {
		s.End()
	}
	_ = tp.Shutdown(context.Background())

	read, err := spancheck.ReadStdoutTrace(&file)
	fmt.Println(len(read), "spans read, error:", err)
	for _, c := range spancheck.NewIndex(read).HandlerChains() {
		fmt.Println(c.Check())
	}
	// Output:
	// 4 spans read, error: <nil>
	// ns/a OnAdd [OnAdd ← distribute ← HandleDeltas ← ListAndWatch watch]: want On* ← nextCh ← pop ← addCh ← distribute ← HandleDeltas ← ListAndWatch <source>
}
