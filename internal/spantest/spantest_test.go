package spantest_test

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/internal/spantest"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// record records one key's add → queued → process chain, and a second add
// of the key, merged into the first and linked from the process. queuedKey
// is the key the queued span says.
func record(queuedKey string) spantest.Spans { return spantest.Spans(recorder(queuedKey).Ended()) }

// recorder is record's recorder.
func recorder(queuedKey string) *tracetest.SpanRecorder {
	rec := tracetest.NewSpanRecorder()
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("spantest")
	key := attribute.String(string(tracing.KeyWorkqueueKey), "ns/a")
	ctx, add := tr.Start(context.Background(), tracing.SpanWorkqueueAdd, trace.WithAttributes(key))
	_, merged := tr.Start(context.Background(), tracing.SpanWorkqueueAdd,
		trace.WithAttributes(key, attribute.Bool(string(tracing.KeyWorkqueueCoalesced), true)))
	merged.End()
	ctx, queued := tr.Start(ctx, tracing.SpanWorkqueueQueued,
		trace.WithAttributes(attribute.String(string(tracing.KeyWorkqueueKey), queuedKey)))
	_, process := tr.Start(ctx, tracing.SpanWorkqueueProcess, trace.WithAttributes(key),
		trace.WithLinks(trace.Link{SpanContext: merged.SpanContext()}))
	process.End()
	queued.End()
	add.End()
	return rec
}

func TestSpansFindByNameIDAndParent(t *testing.T) {
	all := record("ns/a")
	adds := all.Named(tracing.SpanWorkqueueAdd)
	require.Len(t, adds, 2)
	process := all.Named(tracing.SpanWorkqueueProcess)[0]
	queued := all.ParentOf(process)
	require.NotNil(t, queued)
	assert.Equal(t, tracing.SpanWorkqueueQueued, queued.Name())
	assert.Equal(t, process, all.ByID(process.SpanContext().SpanID()))
	merged, add := adds[0], adds[1] // in the order they ended
	assert.Nil(t, all.ParentOf(add), "a root has no parent")
	assert.True(t, spantest.Attr(merged, tracing.KeyWorkqueueCoalesced).AsBool())
	assert.Equal(t, attribute.EMPTY, spantest.Attr(add, tracing.KeyWorkqueueCoalesced).Type(), "unset is not false")
}

// failures runs check with a testing.TB that records a failure instead of
// failing t, and reports whether check failed.
func failures(check func(t testing.TB)) bool {
	ft := &fakeT{}
	var wg sync.WaitGroup
	wg.Go(func() { check(ft) }) // FailNow ends this goroutine, as it would a test's
	wg.Wait()
	return ft.failed
}

type fakeT struct {
	testing.TB
	failed bool
}

func (*fakeT) Helper()                 {}
func (*fakeT) Name() string            { return "fake" }
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) FailNow()              { f.failed = true; runtime.Goexit() }

func TestCheckWorkqueueAccountingPassesAWholeChainAndFailsAProcessUnderAnotherKey(t *testing.T) {
	assert.False(t, failures(func(t testing.TB) { spantest.CheckWorkqueueAccounting(t, record("ns/a"), true) }))
	assert.True(t, failures(func(t testing.TB) { spantest.CheckWorkqueueAccounting(t, record("ns/b"), true) }),
		"a process under a queued span of another key")
}

func TestCheckQueueRunComparesTheSpansWithTheCounts(t *testing.T) {
	counted := spantest.QueueCounts{Adds: 2, Processed: 1}
	assert.False(t, failures(func(t testing.TB) { spantest.CheckQueueRun(t, recorder("ns/a"), counted, 1, 2) }))
	for name, check := range map[string]func(t testing.TB){
		"an add the spans miss": func(t testing.TB) {
			spantest.CheckQueueRun(t, recorder("ns/a"), spantest.QueueCounts{Adds: 3, Processed: 1}, 1, 2)
		},
		"a Get without a process span": func(t testing.TB) {
			spantest.CheckQueueRun(t, recorder("ns/a"), spantest.QueueCounts{Adds: 2, Processed: 2}, 2, 2)
		},
		"fewer adds than the test made": func(t testing.TB) { spantest.CheckQueueRun(t, recorder("ns/a"), counted, 1, 3) },
		"still in process": func(t testing.TB) {
			spantest.CheckQueueRun(t, recorder("ns/a"), spantest.QueueCounts{Adds: 2, Processed: 1, Processing: 1}, 1, 2)
		},
	} {
		assert.True(t, failures(check), name)
	}
}
