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

// chain records one handler call's chain, as the informer would emit it,
// leaving out the span named skip (if any).
func chain(t *testing.T, tp trace.TracerProvider, skip string) {
	t.Helper()
	tr := tp.Tracer("test")
	attrs := trace.WithAttributes(tracing.KeyInformerName.String("pods"), tracing.KeyObjectKey.String("ns/a"),
		tracing.KeyListener.String("h#0"))
	ctx := context.Background()
	for _, s := range []struct {
		name string
		kind trace.SpanKind
	}{
		{"ListAndWatch watch", trace.SpanKindProducer}, {tracing.SpanHandleDeltas, trace.SpanKindConsumer},
		{tracing.SpanDistribute, trace.SpanKindInternal}, {tracing.SpanAddCh, trace.SpanKindProducer},
		{tracing.SpanPop, trace.SpanKindInternal}, {tracing.SpanNextCh, trace.SpanKindInternal}, {"OnUpdate", trace.SpanKindConsumer},
	} {
		c, span := tr.Start(ctx, s.name, attrs, trace.WithSpanKind(s.kind), trace.WithAttributes(tracing.KeyEventType.String("MODIFIED")))
		if s.name != skip {
			ctx = c
		}
		if s.name == skip {
			// A span that is never ended is never exported: its child
			// hangs from nothing.
			continue
		}
		defer span.End()
	}
}

func TestCheckAcceptsAContractChainAndNamesWhatIsMissing(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	chain(t, sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), "")
	spans := make([]Span, 0)
	for _, s := range rec.Ended() {
		spans = append(spans, FromReadOnly(s))
	}
	chains := NewIndex(spans).HandlerChains()
	require.Len(t, chains, 1)
	assert.NoError(t, chains[0].Check())
	assert.Equal(t, "ns/a", chains[0].Key())

	rec = tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	chain(t, tp, tracing.SpanPop)
	spans = spans[:0]
	for _, s := range rec.Ended() {
		spans = append(spans, FromReadOnly(s))
	}
	chains = NewIndex(spans).HandlerChains()
	require.Len(t, chains, 1)
	err := chains[0].Check()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "want On* ← nextCh ← pop ← addCh")
}

// ReadStdoutTrace reads back what the stdouttrace exporter wrote: the same
// spans, parents, kinds and attributes as the SDK held.
func TestReadStdoutTraceRoundTrips(t *testing.T) {
	var buf bytes.Buffer
	exp, err := stdouttrace.New(stdouttrace.WithWriter(&buf), stdouttrace.WithPrettyPrint())
	require.NoError(t, err)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithSyncer(exp))
	chain(t, tp, "")
	require.NoError(t, tp.Shutdown(context.Background()))

	got, err := ReadStdoutTrace(&buf)
	require.NoError(t, err)
	var want []Span
	for _, s := range rec.Ended() {
		want = append(want, FromReadOnly(s))
	}
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i].Name, got[i].Name)
		assert.Equal(t, want[i].SpanID, got[i].SpanID)
		assert.Equal(t, want[i].ParentID, got[i].ParentID)
		assert.Equal(t, want[i].Kind, got[i].Kind)
		assert.Equal(t, want[i].Attrs, got[i].Attrs)
		assert.True(t, want[i].Start.Equal(got[i].Start))
	}
	_, err = ReadStdoutTrace(bytes.NewBufferString(`{"Name": 3}`))
	assert.Error(t, err)
}

// object records one delta's trace as the queue would: its root, and then
// what the test asks for: a queue wait span (dropped or not) and a
// HandleDeltas span.
func object(tp trace.TracerProvider, key string, queued, dropped, handled bool) {
	tr := tp.Tracer("test")
	attrs := trace.WithAttributes(tracing.KeyInformerName.String("pods"), tracing.KeyObjectKey.String(key))
	ctx, root := tr.Start(context.Background(), "ListAndWatch resync", attrs, trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(tracing.KeyEventType.String("RESYNC")))
	root.End()
	if queued {
		_, q := tr.Start(ctx, tracing.SpanQueued, attrs, trace.WithAttributes(tracing.KeyDeltaType.String("Sync")))
		if dropped {
			q.SetAttributes(tracing.KeyQueueDropped.Bool(true))
		}
		q.End()
	}
	if handled {
		_, h := tr.Start(ctx, tracing.SpanHandleDeltas, attrs, trace.WithSpanKind(trace.SpanKindConsumer))
		h.End()
	}
}

// A root whose delta was queued at stop is complete by drop, and said to be;
// one with no wait span and no HandleDeltas is lost, and named.
func TestCheckRootsTellsDroppedAtStopFromLost(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	object(tp, "ns/handled", true, false, true)
	object(tp, "ns/dropped", true, true, false)
	object(tp, "ns/lost", false, false, false)
	object(tp, "ns/both", true, true, true)
	object(tp, "ns/popped-unhandled", true, false, false)
	var spans []Span
	for _, s := range rec.Ended() {
		spans = append(spans, FromReadOnly(s))
	}
	ix := NewIndex(spans)
	got := map[string]RootCheck{}
	for _, rc := range ix.CheckRoots() {
		got[rc.Root.Attr(tracing.KeyObjectKey)] = rc
	}
	require.Len(t, got, 5)
	assert.NoError(t, got["ns/handled"].Err)
	assert.False(t, got["ns/handled"].Dropped)
	assert.NoError(t, got["ns/dropped"].Err)
	assert.True(t, got["ns/dropped"].Dropped)
	require.Error(t, got["ns/lost"].Err)
	assert.Contains(t, got["ns/lost"].Err.Error(), "ns/lost ListAndWatch resync RESYNC: lost")
	require.Error(t, got["ns/both"].Err)
	assert.Contains(t, got["ns/both"].Err.Error(), "dropped at stop, yet handled")
	require.Error(t, got["ns/popped-unhandled"].Err)

	// As a chain: [queued ← root], complete by drop.
	drops := ix.DroppedChains()
	require.Len(t, drops, 2)
	for _, c := range drops {
		assert.NoError(t, c.Check())
		assert.True(t, c.Dropped)
		assert.Equal(t, tracing.SpanQueued, c.Spans[0].Name)
	}
	assert.Equal(t, "ns/dropped ListAndWatch resync: dropped at stop (informer.queue.dropped=true)", drops[0].String())
	// A queue wait span that is not marked dropped is no chain by drop.
	notDropped := drops[0]
	q := *notDropped.Spans[0]
	q.Attrs = map[attribute.Key]string{tracing.KeyInformerName: "pods", tracing.KeyObjectKey: "ns/dropped", tracing.KeyDeltaType: "Sync"}
	notDropped.Spans = []*Span{&q, notDropped.Spans[1]}
	err := notDropped.Check()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not a queue wait span with informer.queue.dropped=true")
}
