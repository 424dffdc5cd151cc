// Package spantest reads the spans a test recorded (an OpenTelemetry
// tracetest.SpanRecorder's): it finds them by name and by ID, reads their
// attributes, and checks that a traced workqueue accounted for every add.
// dropin's queue tests and dropin/crqueue's tests check the same spans with
// it; each used to carry its own copy.
//
// It sits with the helpers (internal/) and imports only internal/tracing,
// for the span names; internal/spancheck reads spans as a program does, with
// no test in sight, and this package fails tests.
package spantest

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// Spans are recorded spans, e.g. Spans(rec.Ended()).
//
// Ours: a test helper.
type Spans []sdktrace.ReadOnlySpan

// Named returns the spans called name, in their order.
func (ss Spans) Named(name string) Spans {
	var out Spans
	for _, s := range ss {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// ByID returns the span with ID id, or nil.
func (ss Spans) ByID(id trace.SpanID) sdktrace.ReadOnlySpan {
	for _, s := range ss {
		if s.SpanContext().SpanID() == id {
			return s
		}
	}
	return nil
}

// ParentOf returns s's parent among ss, or nil (a root, or a parent that
// did not end).
func (ss Spans) ParentOf(s sdktrace.ReadOnlySpan) sdktrace.ReadOnlySpan {
	return ss.ByID(s.Parent().SpanID())
}

// Attr returns s's attribute key, or the empty Value (Type EMPTY) when s
// has none: which tells an attribute left unset from one set to false.
//
// Ours: a test helper.
func Attr(s sdktrace.ReadOnlySpan, key attribute.Key) attribute.Value {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// CheckWorkqueueAccounting requires a traced workqueue's spans to account
// for every add exactly once: one not merged is the start of exactly one
// process's chain; one merged (workqueue.coalesced) is linked from exactly
// one process and ends its own trace; and every process hangs under a
// queued span of its own key (the queue was traced from its first call).
// With strict false (rate-limited adds among the calls), an entry the
// wrapper never saw fire is ended by the shutdown, and it and the adds
// merged into it are left unaccounted.
//
// Ours: a test helper for the spans of dropin's traced queues
// (docs/span-contract.md, workqueue.*).
func CheckWorkqueueAccounting(t testing.TB, all Spans, strict bool) {
	t.Helper()
	servedBy := map[trace.SpanID]int{} // add or delayed span → processes serving it
	for _, p := range all.Named(tracing.SpanWorkqueueProcess) {
		queued := all.ParentOf(p)
		require.NotNil(t, queued, "process without a queued parent")
		require.Equal(t, tracing.SpanWorkqueueQueued, queued.Name())
		key := Attr(p, tracing.KeyWorkqueueKey).AsString()
		require.Equal(t, key, Attr(queued, tracing.KeyWorkqueueKey).AsString())
		servedBy[queued.Parent().SpanID()]++
		for _, l := range p.Links() {
			linked := all.ByID(l.SpanContext.SpanID())
			require.NotNil(t, linked)
			require.Equal(t, tracing.SpanWorkqueueAdd, linked.Name())
			require.Equal(t, key, Attr(linked, tracing.KeyWorkqueueKey).AsString(), "a process links adds of its own key")
			servedBy[l.SpanContext.SpanID()]++
		}
	}
	delayedOf := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, d := range all.Named(tracing.SpanWorkqueueDelayed) {
		delayedOf[d.Parent().SpanID()] = d
	}
	for _, a := range all.Named(tracing.SpanWorkqueueAdd) {
		id := a.SpanContext().SpanID()
		if Attr(a, tracing.KeyWorkqueueCoalesced).AsBool() {
			if strict {
				require.Equal(t, 1, servedBy[id], "a merged add is linked from one process")
			} else {
				// merged into a rate-limited entry the wrapper never saw
				// fire, ended by the shutdown
				require.LessOrEqual(t, servedBy[id], 1, "a merged add is linked from one process at most")
			}
			for _, s := range all {
				require.NotEqual(t, id, s.Parent().SpanID(), "a merged add ends its trace")
			}
			continue
		}
		d, isDelayed := delayedOf[id]
		if !isDelayed {
			require.Equal(t, 1, servedBy[id], "an add not merged starts one process's chain")
			continue
		}
		switch v := Attr(d, tracing.KeyWorkqueueCoalesced); {
		case v.Type() == attribute.EMPTY:
			require.False(t, strict, "a delayed span ended by the shutdown, though every delay was over")
		case v.AsBool():
			require.Equal(t, 1, servedBy[id], "a delay that fired into a waiting key: its add is linked")
		default:
			require.Equal(t, 1, servedBy[d.SpanContext().SpanID()], "a delay that fired starts one process's chain")
		}
	}
}

// QueueCounts is what a traced queue counted over a run: dropin's
// QueueStats Adds, Processed and Processing.
//
// Ours: a test helper.
type QueueCounts struct {
	Adds, Processed uint64
	Processing      int
}

// CheckQueueRun requires a traced queue's spans, once its run is over (shut
// down, workers returned), to agree with what it counted and with what the
// test did: every span that started ended; one workqueue.process span per
// item the workers processed, which is what the queue counted; one
// workqueue.add span per add it counted, at least minAdds (the test's own
// adds; its workers' retries come on top); and nothing left in process.
//
// Ours: a test helper for the concurrency tests of dropin's traced queues.
func CheckQueueRun(t testing.TB, rec *tracetest.SpanRecorder, counted QueueCounts, processed int64, minAdds int) {
	t.Helper()
	all := Spans(rec.Ended())
	require.Len(t, all, len(rec.Started()), "every span ended")
	require.EqualValues(t, processed, counted.Processed)
	require.Len(t, all.Named(tracing.SpanWorkqueueProcess), int(processed), "a process span per Get")
	require.EqualValues(t, len(all.Named(tracing.SpanWorkqueueAdd)), counted.Adds)
	require.GreaterOrEqual(t, counted.Adds, uint64(minAdds))
	require.Zero(t, counted.Processing)
}
