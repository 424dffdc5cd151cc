package kube_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/kube"
)

// An unstructured client's watch decodes each event's envelope
// ({"type", "object"}, which has no kind of its own) and its object as
// Unstructured. Decoding the envelope with the unstructured scheme, which
// wants a kind at the top, turned every event into an ERROR
// ("Object 'Kind' is missing"), and an informer relisted on each.
func TestUnstructuredClientDecodesWatchEvents(t *testing.T) {
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	defer srv.Stop()
	c, err := kube.UnstructuredRESTClientFor(srv.Config(), corev1.SchemeGroupVersion)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, err := c.Get().Namespace("default").Resource("configmaps").
		VersionedParams(&metav1.ListOptions{Watch: true}, metav1.ParameterCodec).Watch(ctx)
	require.NoError(t, err)
	defer w.Stop()
	_, err = srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}})
	require.NoError(t, err)
	ev := <-w.ResultChan()
	require.Equal(t, watch.Added, ev.Type, "%v", ev.Object)
	u, ok := ev.Object.(*unstructured.Unstructured)
	require.True(t, ok, "%T", ev.Object)
	assert.Equal(t, "ConfigMap", u.GetKind())
	assert.Equal(t, "a", u.GetName())
}
