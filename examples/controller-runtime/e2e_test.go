//go:build e2e

package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// clusterNamespace makes a namespace named prefix-<nanoseconds> on the
// cluster that KUBECONFIG names (hack/local-cluster.sh's), deleted when the
// test ends; it returns the cluster's config, a clientset on it and the
// namespace's name.
func clusterNamespace(t *testing.T, prefix string) (*rest.Config, *kubernetes.Clientset, string) {
	t.Helper()
	path := os.Getenv("KUBECONFIG")
	if path == "" {
		t.Fatal(`KUBECONFIG is not set: run with hack/test.sh, or after hack/local-cluster.sh up && eval "$(hack/local-cluster.sh env)"`)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	require.NoError(t, err)
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	ns := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
	_, err = client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	return cfg, client, ns
}

// TestControllerRuntimeOnARealAPIServer runs the manager, with
// NewInformer = dropin.NewSharedIndexInformer and the traced queue, against
// kube-apiserver (hack/local-cluster.sh): a create, an update and a delete
// of a watched ConfigMap reach the reconcile, and every reconcile's
// workqueue.process span leads back, parent by parent, through the
// workqueue and the handler call to the ListAndWatch root of the watch
// event (or listed object) that caused it (spancheck.ReconcileChains).
func TestControllerRuntimeOnARealAPIServer(t *testing.T) {
	cfg, client, ns := clusterNamespace(t, "e2e-cr")
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	previous := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(previous) })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	opts := ManagerOptions(ns)
	// controller-runtime refuses a second controller of one name in a
	// process (for its metrics); go test -count=N runs this N times in one.
	opts.Controller.SkipNameValidation = ptr.To(true)
	mgr, err := ctrl.NewManager(cfg, opts)
	require.NoError(t, err)
	var mu sync.Mutex
	var reconciles []string
	_, err = Setup(mgr, func(req reconcile.Request, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			reconciles = append(reconciles, req.String())
		}
	})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stop := sync.OnceFunc(func() {
		cancel()
		require.NoError(t, <-done)
	})
	defer stop()

	cms := client.CoreV1().ConfigMaps(ns)
	// A marker first: once it is reconciled, the controller's handler is
	// registered, so what follows arrives as watch events. (Objects that
	// exist when a handler is added reach it as synthetic adds, whose root
	// is AddEventHandler, not ListAndWatch: the contract's late handler.)
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "marker", Labels: map[string]string{WatchLabel: "true"}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(reconciles) > 0
	}, 60*time.Second, 20*time.Millisecond, "the marker reached the reconcile")
	status := func() (*corev1.ConfigMap, error) { return cms.Get(ctx, "app"+StatusSuffix, metav1.GetOptions{}) }
	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Labels: map[string]string{WatchLabel: "true"}},
		Data: map[string]string{"a": "1"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := status()
		return err == nil && st.Data["observedResourceVersion"] == created.ResourceVersion
	}, 60*time.Second, 20*time.Millisecond, "the create reached the reconcile")

	created.Data["b"] = "2"
	updated, err := cms.Update(ctx, created, metav1.UpdateOptions{})
	require.NoError(t, err)
	var stamped trace.SpanContext // the span the status was last written from
	require.Eventually(t, func() bool {
		st, err := status()
		if err != nil || st.Data["observedResourceVersion"] != updated.ResourceVersion {
			return false
		}
		stamped, _, _ = tracing.Traceparent(st)
		return true
	}, 30*time.Second, 20*time.Millisecond, "the update reached the reconcile")
	require.True(t, stamped.IsValid(), "the status carries tracing.k8s.io/traceparent")

	require.NoError(t, cms.Delete(ctx, "app", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		_, err := status()
		return apierrors.IsNotFound(err)
	}, 30*time.Second, 20*time.Millisecond, "the delete reached the reconcile")

	// Stop the manager: it returns once its workers have, so every
	// reconcile's workqueue.process span has ended and been recorded.
	stop()
	mu.Lock()
	n := len(reconciles)
	mu.Unlock()
	require.GreaterOrEqual(t, n, 3)
	var spans []spancheck.Span
	for _, s := range rec.Ended() {
		spans = append(spans, spancheck.FromReadOnly(s))
	}
	chains := spancheck.NewIndex(spans).ReconcileChains()
	var ofApp int
	for _, c := range chains {
		require.NoError(t, c.Check())
		if c.Key() != ns+"/app" {
			require.True(t, c.FromWatch() || c.Root().Name == tracing.SpanAddEventHandle,
				"the marker's chain starts at the watch or at its synthetic add: %s", c)
			continue
		}
		ofApp++
		require.True(t, c.FromWatch(), "the reconcile's chain starts at the watch: %s", c)
	}
	require.GreaterOrEqual(t, len(chains), n, "a workqueue.process for every reconcile, each with its whole chain")
	require.GreaterOrEqual(t, ofApp, 3, "the create, the update and the delete of app each reconciled")
	// The stamp names the workqueue.process of a reconcile of app
	// (Reconcile took it with dropin.ReconcileContext on controller-runtime's
	// worker goroutine, which called the queue's Get).
	var stamper *spancheck.ReconcileChain
	for i, c := range chains {
		if c.Spans[0].SpanID == stamped.SpanID() {
			stamper = &chains[i]
		}
	}
	require.NotNil(t, stamper, "the status's traceparent names a reconcile's workqueue.process")
	require.Equal(t, ns+"/app", stamper.Key())
	require.True(t, stamper.FromWatch(), "%s", stamper)
}
