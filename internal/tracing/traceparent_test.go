package tracing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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

// An unstructured object (a CRD's, on a dynamic informer) says the same as
// its typed twin, and is read in place: GetAnnotations would copy every
// annotation into a new map for each watched event.
func TestTraceparentOfUnstructuredIsReadInPlace(t *testing.T) {
	good := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	bad := "not a traceparent"
	for _, v := range []*string{nil, &good, &bad} {
		which := "none"
		if v != nil {
			which = *v
		}
		typed := withAnnotation(v)
		typed.Annotations = withMore(typed.Annotations, map[string]string{
			"kubectl.kubernetes.io/last-applied-configuration": `{"kind":"ConfigMap"}`, "team": "a"})
		raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
		require.NoError(t, err)
		u := &unstructured.Unstructured{Object: raw}

		wantSC, wantIgnored, wantPresent := Traceparent(typed)
		sc, ignored, present := Traceparent(u)
		assert.Equal(t, wantPresent, present, "present, annotation %q", which)
		assert.Equal(t, wantIgnored, ignored, "ignored, annotation %q", which)
		assert.True(t, wantSC.Equal(sc), "span context, annotation %q", which)

		allocs := testing.AllocsPerRun(100, func() { traceparentOf(u) })
		assert.Zero(t, allocs, "reading an unstructured object's annotation allocates (annotation %q)", which)
	}
	// No metadata, no annotations, an annotation of another type: absent.
	for _, obj := range []map[string]any{
		{},
		{"metadata": map[string]any{"name": "x"}},
		{"metadata": map[string]any{"annotations": map[string]any{AnnotationTraceparent: int64(3)}}},
	} {
		_, _, present := Traceparent(&unstructured.Unstructured{Object: obj})
		assert.False(t, present, "%v", obj)
	}
}

func withMore(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
