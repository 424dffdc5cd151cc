package livepage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// A backlog, span by span: 40 changes whose roots end at once, in a store of
// 10 traces, then, in the same order, the late half of each trace: the wait
// in the listener's buffer (which began with the change), the handler call
// and the reconcile it queued. The store ends with the 10 newest changes
// whole, and every late span of the 30 evicted ones is dropped, whether its
// trace is among those remembered as evicted or only older than one that
// was (a wait that began before the newest evicted trace did).
func TestSpanStoreDropsTheLateSpansOfEvictedTraces(t *testing.T) {
	const changes, kept = 40, 10
	st := NewSpanStore(kept)
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(st)).Tracer("test")
	t0 := time.Now()
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Millisecond) }
	type change struct {
		ctx context.Context
		id  trace.TraceID
	}
	var cs []change
	for i := range changes {
		ctx, root := tr.Start(context.Background(), tracing.SpanRootPrefix+"watch", trace.WithTimestamp(at(i)),
			trace.WithAttributes(tracing.KeyObjectKey.String(fmt.Sprintf("ns/p%02d", i)), tracing.KeyEventType.String("MODIFIED")))
		root.End(trace.WithTimestamp(at(i)))
		actx, addCh := tr.Start(ctx, tracing.SpanAddCh, trace.WithTimestamp(at(i)))
		addCh.End(trace.WithTimestamp(at(i)))
		cs = append(cs, change{actx, root.SpanContext().TraceID()})
	}
	_, evicted := st.Counts()
	require.Equal(t, changes-kept, evicted)

	late := t0.Add(time.Minute)
	for i, c := range cs {
		pctx, pop := tr.Start(c.ctx, tracing.SpanPop, trace.WithTimestamp(at(i)))
		pop.End(trace.WithTimestamp(late))
		nctx, next := tr.Start(pctx, tracing.SpanNextCh, trace.WithTimestamp(late))
		next.End(trace.WithTimestamp(late))
		hctx, h := tr.Start(nctx, "OnUpdate", trace.WithTimestamp(late))
		wctx, add := tr.Start(hctx, tracing.SpanWorkqueueAdd, trace.WithTimestamp(late))
		add.End(trace.WithTimestamp(late))
		h.End(trace.WithTimestamp(late))
		qctx, queued := tr.Start(wctx, tracing.SpanWorkqueueQueued, trace.WithTimestamp(late))
		queued.End(trace.WithTimestamp(late))
		_, proc := tr.Start(qctx, tracing.SpanWorkqueueProcess, trace.WithTimestamp(late),
			trace.WithAttributes(tracing.KeyWorkqueueKey.String(fmt.Sprintf("ns/p%02d", i))))
		proc.End(trace.WithTimestamp(late))
	}

	kept2, evicted2 := st.Counts()
	assert.Equal(t, kept, kept2)
	assert.Equal(t, changes-kept, evicted2, "no trace evicted by a late span")
	assert.Equal(t, (changes-kept)*6, st.LateSpansDropped(), "six late spans of each evicted change")
	events := st.Events(changes)
	require.Len(t, events, kept)
	for i, e := range events {
		assert.Equal(t, fmt.Sprintf("ns/p%02d", changes-1-i), e.Key, "the newest first")
		assert.Equal(t, 1, e.HandlerCalls, "%s whole", e.Key)
	}
	rs := st.Reconciles(changes)
	require.Len(t, rs, kept, "a reconcile for every kept change, none for an evicted one")
	assert.Equal(t, fmt.Sprintf("ns/p%02d", changes-1), rs[0].Key)
	for _, c := range cs[:changes-kept] {
		_, ok := st.Trace(c.id)
		assert.False(t, ok, "an evicted trace stays evicted")
	}
}

// The ways a late span is known, each alone. Past the ring of remembered
// IDs, a wait that began before the newest evicted trace did is still
// known. A new trace (its root ends first) is kept. A trace whose first
// span to end has a parent (a fragment: a reflector cycle still running, or
// the late half of a change) is kept while there is room or another
// fragment to evict, but never pushes out a whole trace.
func TestSpanStoreTellsALateSpanFromANewTrace(t *testing.T) {
	st := NewSpanStore(2)
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(st)).Tracer("test")
	t0 := time.Now()
	start := func(i int) (context.Context, trace.Span) {
		return tr.Start(context.Background(), tracing.SpanRootPrefix+"watch", trace.WithTimestamp(t0.Add(time.Duration(i)*time.Second)))
	}
	// An old change's root, kept; its wait goes on.
	oldCtx, oldRoot := start(0)
	oldRoot.End()
	// Many newer changes, each evicting the oldest: the old change is
	// evicted first, then forgotten by the ring (2 IDs per kept trace).
	for i := 1; i <= 8; i++ {
		_, r := start(i)
		r.End()
	}
	_, pop := tr.Start(oldCtx, tracing.SpanPop, trace.WithTimestamp(t0))
	pop.End()
	assert.Equal(t, 1, st.LateSpansDropped(), "a wait that began before the newest evicted trace began: late")

	// A new change: its root, then its wait, begun after.
	newCtx, newRoot := start(10)
	newRoot.End()
	_, w := tr.Start(newCtx, tracing.SpanPop, trace.WithTimestamp(t0.Add(10*time.Second)))
	w.End()
	spans, ok := st.Trace(newRoot.SpanContext().TraceID())
	assert.True(t, ok, "a new trace is kept")
	assert.Len(t, spans, 2, "whole")

	// A reflector cycle's child ends before its root: a fragment, with
	// only whole traces to evict: dropped, and the whole traces stay.
	cctx, cycle := tr.Start(context.Background(), "Reflector.ListAndWatch", trace.WithTimestamp(t0.Add(11*time.Second)))
	_, list := tr.Start(cctx, "Reflector.list", trace.WithTimestamp(t0.Add(11*time.Second)))
	list.End()
	_, ok = st.Trace(cycle.SpanContext().TraceID())
	assert.False(t, ok, "a fragment does not push out a whole trace")
	assert.Equal(t, 2, st.LateSpansDropped())
	kept, _ := st.Counts()
	assert.Equal(t, 2, kept)

	// With room, a fragment is kept, and it is the first to go.
	roomy := NewSpanStore(2)
	tr = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(roomy)).Tracer("test")
	cctx, cycle = tr.Start(context.Background(), "Reflector.ListAndWatch")
	_, list = tr.Start(cctx, "Reflector.list")
	list.End()
	_, r1 := tr.Start(context.Background(), tracing.SpanRootPrefix+"watch")
	r1.End()
	_, ok = roomy.Trace(cycle.SpanContext().TraceID())
	assert.True(t, ok, "a fragment is kept while there is room")
	_, r2 := tr.Start(context.Background(), tracing.SpanRootPrefix+"watch")
	r2.End()
	_, ok = roomy.Trace(cycle.SpanContext().TraceID())
	assert.False(t, ok, "the fragment goes first, though the oldest trace is")
	_, ok = roomy.Trace(r1.SpanContext().TraceID())
	assert.True(t, ok)
	assert.Zero(t, roomy.LateSpansDropped())

	// A late handler's synthetic add: its addCh can end before its root
	// AddEventHandler. In a store full of whole traces the addCh is
	// dropped as a fragment, and the root and the rest are kept.
	rctx, addRoot := tr.Start(context.Background(), tracing.SpanAddEventHandle)
	actx, addCh := tr.Start(rctx, tracing.SpanAddCh)
	addCh.End()
	addRoot.End()
	_, popped := tr.Start(actx, tracing.SpanPop)
	popped.End()
	spans, ok = roomy.Trace(addRoot.SpanContext().TraceID())
	require.True(t, ok, "the synthetic add's trace is kept from its root on")
	assert.Len(t, spans, 2, "its root and pop; the addCh that ended first was dropped")
}
