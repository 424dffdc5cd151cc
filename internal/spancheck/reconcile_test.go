package spancheck

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

type spec struct {
	name  string
	kind  trace.SpanKind
	attrs []attribute.KeyValue
}

var (
	informerAttrs = []attribute.KeyValue{tracing.KeyInformerName.String("configmaps"), tracing.KeyObjectKey.String("ns/a"),
		tracing.KeyListener.String("h#0"), tracing.KeyEventType.String("MODIFIED")}
	handlerPart = []spec{
		{"ListAndWatch watch", trace.SpanKindProducer, informerAttrs}, {tracing.SpanHandleDeltas, trace.SpanKindConsumer, informerAttrs},
		{tracing.SpanDistribute, trace.SpanKindInternal, informerAttrs}, {tracing.SpanAddCh, trace.SpanKindProducer, informerAttrs},
		{tracing.SpanPop, trace.SpanKindInternal, informerAttrs}, {tracing.SpanNextCh, trace.SpanKindInternal, informerAttrs},
		{tracing.SpanOnUpdate, trace.SpanKindConsumer, informerAttrs},
	}
)

// queueSpans is one reconcile's own segment, as dropin's TracedQueue emits
// it: add [→ delayed] → queued → process, for key on queue "q".
func queueSpans(key string, delayed bool) []spec {
	attrs := []attribute.KeyValue{tracing.KeyWorkqueueName.String("q"), tracing.KeyWorkqueueKey.String(key)}
	out := []spec{{tracing.SpanWorkqueueAdd, trace.SpanKindProducer, append(attrs, tracing.KeyWorkqueueCoalesced.Bool(false))}}
	if delayed {
		out = append(out, spec{tracing.SpanWorkqueueDelayed, trace.SpanKindInternal, append(attrs, tracing.KeyWorkqueueCoalesced.Bool(false))})
	}
	return append(out, spec{tracing.SpanWorkqueueQueued, trace.SpanKindInternal, attrs},
		spec{tracing.SpanWorkqueueProcess, trace.SpanKindConsumer, attrs})
}

func concat(parts ...[]spec) []spec {
	var out []spec
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// nest records specs as one line of descent, each the child of the one
// before. The span named skip is left out and its child hangs from the
// one before it (the chain closes over the gap); the span named lose is
// never ended, so never exported, while its child still names it as parent.
func nest(t *testing.T, specs []spec, skip, lose string, edit func(i int, s trace.Span)) []Span {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("test")
	ctx := context.Background()
	var started []trace.Span
	for i, s := range specs {
		c, span := tr.Start(ctx, s.name, trace.WithSpanKind(s.kind), trace.WithAttributes(s.attrs...))
		if edit != nil {
			edit(i, span)
		}
		switch s.name {
		case skip:
		case lose:
			ctx = c
		default:
			ctx = c
			started = append(started, span)
		}
	}
	for _, s := range started {
		s.End()
	}
	var out []Span
	for _, s := range rec.Ended() {
		out = append(out, FromReadOnly(s))
	}
	return out
}

func TestReconcileChainsAcceptTheContractsChains(t *testing.T) {
	for _, tc := range []struct {
		name      string
		specs     []spec
		reconcile int // how many reconciles
		fromWatch bool
	}{
		{"from a watch event", concat(handlerPart, queueSpans("ns/a", false)), 1, true},
		{"through a delay", concat(handlerPart, queueSpans("ns/a", true)), 1, true},
		{"re-added during a reconcile", concat(handlerPart, queueSpans("ns/a", false), queueSpans("ns/a", true)), 2, true},
		{"from a synthetic add", concat([]spec{{tracing.SpanAddEventHandle, trace.SpanKindProducer, informerAttrs}},
			handlerPart[3:], queueSpans("ns/a", false)), 1, false},
		{"added outside any handler", queueSpans("ns/a", false), 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chains := NewIndex(nest(t, tc.specs, "", "", nil)).ReconcileChains()
			require.Len(t, chains, tc.reconcile)
			for _, c := range chains {
				assert.NoError(t, c.Check())
				assert.Equal(t, "ns/a", c.Key())
				assert.Equal(t, tc.fromWatch, c.FromWatch(), "%s", c)
			}
			last := chains[len(chains)-1]
			assert.Len(t, last.Spans, len(tc.specs), "the last reconcile's chain goes up to the root: %s", last)
			h, ok := last.Handler()
			assert.Equal(t, tc.name != "added outside any handler", ok)
			if ok {
				assert.Equal(t, tracing.SpanOnUpdate, h.Spans[0].Name)
				assert.NoError(t, h.Check())
			}
		})
	}
}

func TestReconcileChainCheckNamesWhatIsWrong(t *testing.T) {
	whole := concat(handlerPart, queueSpans("ns/a", false))
	for _, tc := range []struct {
		name       string
		specs      []spec
		skip, lose string
		edit       func(i int, s trace.Span)
		want       string
	}{
		{name: "no queued span", specs: whole, skip: tracing.SpanWorkqueueQueued,
			want: "want workqueue.process ← workqueue.queued ← [workqueue.delayed ←] workqueue.add"},
		{name: "the queue never saw the add", specs: queueSpans("ns/a", false)[2:],
			want: "workqueue.process is a root"},
		{name: "a span lost from the export", specs: whole, lose: tracing.SpanDistribute,
			want: "a span is missing between the reconcile and the root"},
		{name: "the handler's chain without pop", specs: whole, skip: tracing.SpanPop,
			want: "the handler call's chain: ns/a OnUpdate"},
		{name: "the add hangs from something else", specs: concat(handlerPart[:3], queueSpans("ns/a", false)),
			want: `workqueue.add hangs from "distribute"`},
		{name: "a merged add", specs: whole, edit: func(i int, s trace.Span) {
			if i == len(handlerPart) {
				s.SetAttributes(tracing.KeyWorkqueueCoalesced.Bool(true))
			}
		}, want: "a merged add ends its trace"},
		{name: "another key on the way", specs: whole, edit: func(i int, s trace.Span) {
			if i == len(handlerPart)+1 {
				s.SetAttributes(tracing.KeyWorkqueueKey.String("ns/b"))
			}
		}, want: `workqueue.queued has workqueue.key "ns/b", the reconcile "ns/a"`},
		{name: "the process is not a consumer", specs: concat(handlerPart, queueSpans("ns/a", false)[:2],
			[]spec{{tracing.SpanWorkqueueProcess, trace.SpanKindInternal, queueSpans("ns/a", false)[2].attrs}}),
			want: "workqueue.process is not a CONSUMER span"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chains := NewIndex(nest(t, tc.specs, tc.skip, tc.lose, tc.edit)).ReconcileChains()
			require.Len(t, chains, 1)
			err := chains[0].Check()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.False(t, chains[0].FromWatch() && tc.lose != "", "an incomplete chain is not from the watch")
		})
	}
}
