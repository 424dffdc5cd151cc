package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/dropin/crqueue"
	"github.com/informer-anatomy/informer-anatomy/examples/internal/metricsetup"
)

// TestMetricsOnManagerRegistry: with the exporter registered on
// controller-runtime's metrics.Registry, as run does, what the manager's
// metrics server serves holds client-go's seven workqueue metrics of
// NewQueue's queue, the informer's three and our two per handler of a
// dropin informer, beside controller-runtime's own metrics, and gathers
// without error. A controller on controller-runtime's default queue puts
// series of the same names on the same registry, labelled controller and
// with controller-runtime's help texts; a Prometheus registry refuses a
// family whose help differs between its series, so the whole page failed
// (500: "has help ... but should have ...") until the provider took
// crqueue.MetricViews, which give ours controller-runtime's help texts.
func TestMetricsOnManagerRegistry(t *testing.T) {
	stop, err := metricsetup.Install(ctrlmetrics.Registry, crqueue.MetricViews()...)
	require.NoError(t, err)
	defer func() { _ = stop(context.Background()) }()

	client := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}})
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().ConfigMaps("").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().ConfigMaps("").Watch(ctx, o)
		},
	}
	inf := dropin.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, client), &corev1.ConfigMap{}, 0, cache.Indexers{})
	q := NewQueue("metrics-test", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	// Another controller of the process on controller-runtime's default
	// queue, on controller-runtime's provider: its workqueue_* series,
	// labelled controller and with controller-runtime's help texts, land
	// on the same registry under the same names as ours.
	crDefault := priorityqueue.New[string]("cr-default")
	defer crDefault.ShutDown()
	crDefault.AddAfter("x", time.Millisecond)
	crDefault.Add("y")
	// A traced queue reporting itself (no provider on its inner).
	selfReported := dropin.NewTracedQueue("self-reported", workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()))
	defer selfReported.ShutDown()
	selfReported.Add("z")
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		cm := obj.(*corev1.ConfigMap)
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name}})
	}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()
	require.True(t, cache.WaitForCacheSync(ctx.Done(), reg.HasSynced))
	req, shutdown := q.Get()
	require.False(t, shutdown)
	require.Equal(t, "a", req.Name)
	q.Done(req)

	rec := httptest.NewRecorder()
	require.Eventually(t, func() bool {
		rec = httptest.NewRecorder()
		metricsetup.Handler(ctrlmetrics.Registry).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		return rec.Code == http.StatusOK
	}, 10*time.Second, 10*time.Millisecond)
	page := rec.Body.String()
	for _, want := range []string{
		`workqueue_depth{name="metrics-test"`,
		`workqueue_adds_total{name="metrics-test"`,
		`workqueue_queue_duration_seconds_bucket{name="metrics-test"`,
		`workqueue_work_duration_seconds_bucket{name="metrics-test"`,
		`workqueue_unfinished_work_seconds{name="metrics-test"`,
		`workqueue_longest_running_processor_seconds{name="metrics-test"`,
		`workqueue_retries_total{name="metrics-test"`,
		`workqueue_adds_total{name="self-reported"`,
		`workqueue_retries_total{name="self-reported"`,
		// controller-runtime's default queue, beside ours.
		`workqueue_adds_total{controller="cr-default",name="cr-default"}`,
		`workqueue_retries_total{controller="cr-default",name="cr-default"}`,
		`informer_queued_items{group="",name="*v1.ConfigMap",`,
		`informer_processing_latency_seconds_bucket{group="",name="*v1.ConfigMap",`,
		`informer_store_resource_version{group="",name="*v1.ConfigMap",`,
		`informer_handler_pending_notifications{handler="`,
		`informer_handler_processing_latency_seconds_bucket{handler="`,
		// controller-runtime's own, on the same page.
		`# TYPE controller_runtime_webhook_panics_total counter`,
	} {
		require.Contains(t, page, want)
	}
}
