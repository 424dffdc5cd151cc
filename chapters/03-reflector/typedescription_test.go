package reflector

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// TestTypeDescriptionMatchesClientGo: TypeDescription is what client-go's
// reflector, given no TypeDescription, reports as its own, and what ours
// takes for its description: the Go type, or an Unstructured's GVK when
// it has one.
func TestTypeDescriptionMatchesClientGo(t *testing.T) {
	widget := &unstructured.Unstructured{}
	widget.SetAPIVersion("example.com/v1")
	widget.SetKind("Widget")
	core := &unstructured.Unstructured{}
	core.SetAPIVersion("v1")
	core.SetKind("ConfigMap")
	meta := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}}
	for _, example := range []any{&corev1.Pod{}, corev1.Pod{}, widget, core, &unstructured.Unstructured{}, meta, nil} {
		theirs := cache.NewReflectorWithOptions(&cache.ListWatch{}, example, cache.NewStore(cache.MetaNamespaceKeyFunc), cache.ReflectorOptions{})
		require.Equal(t, theirs.TypeDescription(), TypeDescription(example), "%T", example)
		ours := NewReflectorWithOptions(nil, example, nil, ReflectorOptions{})
		require.Equal(t, theirs.TypeDescription(), ours.typeDescription, "%T", example)
	}
	require.Equal(t, "example.com/v1, Kind=Widget", TypeDescription(widget))
}
