package tracing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func withAnnotation(value *string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x"}}
	if value != nil {
		cm.Annotations = map[string]string{AnnotationTraceparent: *value}
	}
	return cm
}

func TestTraceparentRoundTripsAndRefusesWhatDoesNotParse(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:  trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8},
	})
	value := FormatTraceparent(sc)
	require.Equal(t, "00-0102030405060708090a0b0c0d0e0f10-0102030405060708-00", value, "an unsampled span keeps its flags")
	assert.Empty(t, FormatTraceparent(trace.SpanContext{}), "no valid span, no value")

	before := TraceparentsIgnored()
	got, ignored, present := Traceparent(withAnnotation(&value))
	require.True(t, present)
	assert.Empty(t, ignored)
	assert.Equal(t, sc.TraceID(), got.TraceID())
	assert.Equal(t, sc.SpanID(), got.SpanID())
	assert.True(t, got.IsRemote())

	padded := " " + value + "\n" // a YAML block scalar's trailing newline
	got, ignored, present = Traceparent(withAnnotation(&padded))
	require.True(t, present)
	assert.Empty(t, ignored)
	assert.Equal(t, sc.SpanID(), got.SpanID(), "white space around the value is trimmed")

	_, _, present = Traceparent(withAnnotation(nil))
	assert.False(t, present, "no annotation")
	_, _, present = Traceparent("not an object")
	assert.False(t, present, "not an object")
	assert.Equal(t, before, TraceparentsIgnored(), "neither is counted")

	bad := "00-0102030405060708090a0b0c0d0e0f10-0102030405060708" // no flags
	got, ignored, present = Traceparent(withAnnotation(&bad))
	assert.True(t, present)
	assert.False(t, got.IsValid())
	assert.Equal(t, bad, ignored)
	assert.Equal(t, before+1, TraceparentsIgnored())
}
