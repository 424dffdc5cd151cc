package kube_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

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

// An unstructured client keeps the server's own message of an error
// response (a metav1.Status), as a typed client does. Before, the Status
// decoded as Unstructured and client-go fell back to a generic error:
// `an error on the server ("unknown")` for "etcd is down", `unknown (get
// pods)` for a 403 that said who may not do what.
func TestUnstructuredClientKeepsTheServersMessage(t *testing.T) {
	for _, c := range []struct {
		code   int
		body   string
		want   string
		reason metav1.StatusReason
	}{
		{500, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"etcd is down","code":500}`, "etcd is down", ""},
		{403, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","message":"pods is forbidden: User \"bob\" cannot list resource \"pods\"","code":403}`,
			`pods is forbidden: User "bob" cannot list resource "pods"`, metav1.StatusReasonForbidden},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(c.code)
			_, _ = w.Write([]byte(c.body))
		}))
		cl, err := kube.UnstructuredRESTClientFor(&rest.Config{Host: srv.URL}, corev1.SchemeGroupVersion)
		require.NoError(t, err)
		for _, verb := range []string{"list", "watch"} {
			var err error
			if verb == "list" {
				err = cl.Get().Resource("pods").Do(context.Background()).Error()
			} else {
				_, err = cl.Get().Resource("pods").VersionedParams(&metav1.ListOptions{Watch: true}, metav1.ParameterCodec).Watch(context.Background())
			}
			require.Error(t, err, verb)
			assert.Equal(t, c.want, err.Error(), "%s %d", verb, c.code)
			var se *apierrors.StatusError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, int32(c.code), se.ErrStatus.Code)
			assert.Equal(t, c.reason, se.ErrStatus.Reason)
		}
		srv.Close()
	}
}
