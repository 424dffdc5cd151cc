package dropin_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/handlerctx"
	"github.com/informer-anatomy/informer-anatomy/internal/spantest"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// TestTracedQueueFollowsTheInformersTraceFilter: an informer traces one
// key of three (TraceKeys); its handler adds every key to a traced queue,
// whose worker re-adds one left-out key rate-limited, as a failing
// reconcile does. Only the traced key gets workqueue.* spans: an add made
// inside a handler call the filter left out, and the process of what it
// added, with the re-adds made there, stay untraced, as the handler call
// itself is. Before the queue followed the filter, each left-out key got
// a trace of its own rooted at workqueue.add.
func TestTracedQueueFollowsTheInformersTraceFilter(t *testing.T) {
	s := newServer(t, "a", "b", "c")
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		q, stop := startTracedPipeline(t, s.srv, sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), func(inf *dropin.Informer) {
			require.NoError(t, inf.SetTraceFilter(deltafifo.TraceKeys("ns/a")))
		}, nil)

		retried := false
		for q.Len() > 0 {
			item, _ := q.Get()
			if item == "ns/b" && !retried {
				retried = true
				q.AddRateLimited(item) // from the untraced process of ns/b
			}
			q.Done(item)
			if q.Len() == 0 {
				synctest.Wait() // the rate limiter's delay
			}
		}
		require.True(t, retried)
		stop()
		require.Zero(t, handlerctx.Active(), "every registration ended")

		all := spantest.Spans(rec.Ended())
		var keys []string
		for _, s := range all {
			if v := spantest.Attr(s, tracing.KeyWorkqueueKey); v.AsString() != "" {
				require.Equal(t, "ns/a", v.AsString(), "%s of a key the informer's filter left out", s.Name())
				keys = append(keys, s.Name())
			}
		}
		require.ElementsMatch(t, []string{tracing.SpanWorkqueueAdd, tracing.SpanWorkqueueQueued, tracing.SpanWorkqueueProcess}, keys)
		process := all.Named(tracing.SpanWorkqueueProcess)[0]
		require.Equal(t, all.Named("OnAdd")[0].SpanContext().TraceID(), process.SpanContext().TraceID(),
			"the traced key's process is in its object's trace")
	})
}

// TestAddOutsideAHandlerCallIsStillTraced: the filter speaks for the
// informer's handler calls only; an Add the user makes elsewhere (a
// periodic requeue of their own) roots a trace as it did, whatever its key.
func TestAddOutsideAHandlerCallIsStillTraced(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	q := traceQueue(rec, newClientGoQueue())
	defer q.ShutDown()
	q.Add("ns/b")
	item, _ := q.Get()
	q.Done(item)
	all := spantest.Spans(rec.Ended())
	require.Len(t, all.Named(tracing.SpanWorkqueueAdd), 1)
	require.Len(t, all.Named(tracing.SpanWorkqueueProcess), 1)
	require.False(t, all.Named(tracing.SpanWorkqueueAdd)[0].Parent().IsValid(), "a root")
}
