package liveview

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// The page's state says how many traceparent annotations the informers
// ignored (they did not parse): the count internal/tracing keeps.
func TestStateCountsIgnoredTraceparents(t *testing.T) {
	ts := startTestServer(t, "127.0.0.1:0")
	read := func() uint64 {
		code, _, body := ts.do(t, http.MethodGet, "api/state", nil)
		require.Equal(t, http.StatusOK, code)
		var st State
		require.NoError(t, json.Unmarshal([]byte(body), &st))
		return st.TraceparentsIgnored
	}
	before := read()
	assert.Equal(t, tracing.TraceparentsIgnored(), before)
	_, _, present := tracing.Traceparent(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x",
		Annotations: map[string]string{tracing.AnnotationTraceparent: "garbage"}}})
	require.True(t, present)
	assert.Equal(t, before+1, read())
}

// A waterfall marks a root's link to the writer of its object, and only
// that one: the link to the reflector's cycle stays unmarked.
func TestWaterfallMarksTheWritersLink(t *testing.T) {
	store := NewSpanStore(10)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(store))
	tr := tp.Tracer("test")
	_, writer := tr.Start(context.Background(), "controller A: reconcile")
	writer.End()
	_, cycle := tr.Start(context.Background(), tracing.SpanListAndWatchCycle)
	cycle.End()
	_, root := tr.Start(context.Background(), tracing.SpanRootPrefix+"watch", trace.WithLinks(
		trace.Link{SpanContext: cycle.SpanContext()},
		trace.Link{SpanContext: writer.SpanContext(), Attributes: []attribute.KeyValue{tracing.KeyLinkAnnotation.String(tracing.AnnotationTraceparent)}},
	), trace.WithAttributes(tracing.KeyObjectKey.String("ns/out"), tracing.KeyEventType.String("ADDED")))
	root.End()

	wf, ok := store.Waterfall(root.SpanContext().TraceID())
	require.True(t, ok)
	require.Len(t, wf.Spans, 1)
	require.Len(t, wf.Spans[0].Links, 2)
	assert.False(t, wf.Spans[0].Links[0].Writer, "the cycle's link")
	assert.True(t, wf.Spans[0].Links[1].Writer, "the writer's link")
	assert.Equal(t, "controller A: reconcile", wf.Spans[0].Links[1].Name)
	assert.Equal(t, writer.SpanContext().TraceID().String(), wf.Spans[0].Links[1].TraceID)
}
