package spancheck

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// rootWithLinks records a handled root of name and event with the given
// links, as chapter 4 would.
func rootWithLinks(tp trace.TracerProvider, key, name, event string, links ...trace.Link) {
	tr := tp.Tracer("test")
	attrs := trace.WithAttributes(tracing.KeyInformerName.String("configmaps"), tracing.KeyObjectKey.String(key))
	ctx, root := tr.Start(context.Background(), name, attrs, trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(tracing.KeyEventType.String(event)), trace.WithLinks(links...))
	root.End()
	_, q := tr.Start(ctx, tracing.SpanRealFIFOQueued, attrs)
	q.End()
	_, h := tr.Start(ctx, tracing.SpanHandleDeltas, attrs, trace.WithSpanKind(trace.SpanKindConsumer))
	h.End()
}

func TestCheckRootsAllowsAWriterLinkOnlyOnAWatchEvent(t *testing.T) {
	var buf bytes.Buffer
	exp, err := stdouttrace.New(stdouttrace.WithWriter(&buf))
	require.NoError(t, err)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithSyncer(exp))
	_, writerSpan := tp.Tracer("test").Start(context.Background(), "A writes")
	writerSpan.End()
	_, cycle := tp.Tracer("test").Start(context.Background(), tracing.SpanListAndWatchCycle)
	cycle.End()
	writer := trace.Link{SpanContext: writerSpan.SpanContext(), Attributes: []attribute.KeyValue{tracing.KeyLinkAnnotation.String(tracing.AnnotationTraceparent)}}
	plain := trace.Link{SpanContext: cycle.SpanContext()}

	rootWithLinks(tp, "ns/added", "ListAndWatch watch", "ADDED", plain, writer)
	rootWithLinks(tp, "ns/modified", "ListAndWatch watch", "MODIFIED", writer, plain)
	rootWithLinks(tp, "ns/unlinked", "ListAndWatch watch", "ADDED", plain)
	rootWithLinks(tp, "ns/deleted", "ListAndWatch watch", "DELETED", writer)
	rootWithLinks(tp, "ns/listed", "ListAndWatch watchlist", "LISTED", writer)
	rootWithLinks(tp, "ns/twice", "ListAndWatch watch", "MODIFIED", writer, writer)
	require.NoError(t, tp.Shutdown(context.Background()))

	fromSDK := make([]Span, 0, len(rec.Ended()))
	for _, s := range rec.Ended() {
		fromSDK = append(fromSDK, FromReadOnly(s))
	}
	fromStdout, err := ReadStdoutTrace(&buf)
	require.NoError(t, err)
	for source, spans := range map[string][]Span{"sdk": fromSDK, "stdouttrace": fromStdout} {
		got := map[string]RootCheck{}
		for _, rc := range NewIndex(spans).CheckRoots() {
			got[rc.Root.Attr(tracing.KeyObjectKey)] = rc
		}
		require.Len(t, got, 6, source)
		for _, ok := range []string{"ns/added", "ns/modified", "ns/unlinked"} {
			assert.NoError(t, got[ok].Err, "%s %s", source, ok)
		}
		assert.Equal(t, []trace.SpanID{writerSpan.SpanContext().SpanID()}, spanIDs(got["ns/added"].Root.WriterLinks), source)
		assert.Len(t, got["ns/added"].Root.Links, 2, source)
		assert.Empty(t, got["ns/unlinked"].Root.WriterLinks, source)
		for bad, want := range map[string]string{
			"ns/deleted": "only an ADDED or MODIFIED watch event", "ns/listed": "only an ADDED or MODIFIED watch event",
			"ns/twice": "2 links to a writer",
		} {
			require.Error(t, got[bad].Err, "%s %s", source, bad)
			assert.Contains(t, got[bad].Err.Error(), want, "%s %s", source, bad)
		}
	}
}

func spanIDs(scs []trace.SpanContext) []trace.SpanID {
	out := make([]trace.SpanID, len(scs))
	for i, sc := range scs {
		out[i] = sc.SpanID()
	}
	return out
}
