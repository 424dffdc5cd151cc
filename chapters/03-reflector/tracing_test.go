package reflector

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

func TestCycleSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	e := newEnv(t)
	e.createPods("a", 2)
	r := newTestReflector(e.lw, newRecordingStore(), &errorLog{}, ReflectorOptions{Name: "pods", TracerProvider: tp, UseWatchList: listFirst})
	run(t, r)
	testutil.Eventually(t, "watching", func() bool { return e.srv.WatchCount() == 1 })
	e.forceRelist() // ends the first cycle with a 410

	testutil.Eventually(t, "first cycle ended", func() bool {
		for _, s := range rec.Ended() {
			if s.Name() == tracing.SpanListAndWatchCycle {
				return true
			}
		}
		return false
	})
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		byName[s.Name()] = append(byName[s.Name()], s)
	}
	cycle := byName[tracing.SpanListAndWatchCycle][0]
	assert.Equal(t, trace.SpanKindInternal, cycle.SpanKind())
	assert.Equal(t, codes.Error, cycle.Status().Code, "a cycle that ended in a relist records why")
	require.NotEmpty(t, byName[tracing.SpanList])
	require.NotEmpty(t, byName[tracing.SpanWatch])

	list, watch := byName[tracing.SpanList][0], byName[tracing.SpanWatch][0]
	for _, child := range []sdktrace.ReadOnlySpan{list, watch} {
		assert.Equal(t, trace.SpanKindClient, child.SpanKind(), child.Name())
		assert.Equal(t, cycle.SpanContext().SpanID(), child.Parent().SpanID(), "%s is a child of the cycle span", child.Name())
		assert.Contains(t, child.Attributes(), tracing.KeyInformerName.String("pods"))
	}
	assert.Contains(t, list.Attributes(), tracing.KeyResourceVersion.String("3"), "the list's RV")
	assert.Contains(t, watch.Attributes(), tracing.KeyResourceVersion.String("3"), "the RV the watch started from")
	assert.Contains(t, cycle.Attributes(), tracing.KeyInformerName.String("pods"))
}
