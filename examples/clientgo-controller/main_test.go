package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/informer-anatomy/informer-anatomy/examples/clientgo-controller/controller"
)

// TestMetricsServed runs the example's controller on a fake clientset with
// the example's /metrics server (legacyregistry, with component-base's
// providers and ours imported), and requires client-go's seven workqueue
// metrics of its queue, the three informer metrics of its ConfigMap
// informer, named by the factory's informer name and resource, and our two
// per-handler metrics in the page, and legacyregistry to gather without
// an error: with a provider linked, every series once, each family with
// one help text.
func TestMetricsServed(t *testing.T) {
	addr, stop, err := serveMetrics("127.0.0.1:0")
	require.NoError(t, err)
	defer stop()

	client := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace: "default", Name: "app", Labels: map[string]string{controller.WatchLabel: "true"},
	}})
	scope, err := newScope("")
	require.NoError(t, err)
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, scope.Options()...)
	controller.UseDropinInformer(factory, scope)
	c, err := controller.New(client, factory.Core().V1().ConfigMaps())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, 1) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
		factory.Shutdown()
	}()
	require.Eventually(t, func() bool {
		_, err := client.CoreV1().ConfigMaps("default").Get(ctx, "app"+controller.StatusSuffix, metav1.GetOptions{})
		return err == nil
	}, 30*time.Second, 10*time.Millisecond, "the reconcile of default/app")

	var page string
	// The status is written before the worker's Done, which records the
	// work duration: wait for that.
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer func() { _ = resp.Body.Close() }()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		b, _ := io.ReadAll(resp.Body)
		page = string(b)
		return strings.Contains(page, "workqueue_work_duration_seconds_count{")
	}, 30*time.Second, 50*time.Millisecond, "the work duration of default/app")
	for _, want := range []string{
		`workqueue_depth{name="configmap-status"`,
		`workqueue_adds_total{name="configmap-status"`,
		`workqueue_queue_duration_seconds_bucket{name="configmap-status"`,
		`workqueue_work_duration_seconds_bucket{name="configmap-status"`,
		`workqueue_unfinished_work_seconds{name="configmap-status"`,
		`workqueue_longest_running_processor_seconds{name="configmap-status"`,
		`workqueue_retries_total{name="configmap-status"`,
		`informer_queued_items{group="",name="clientgo-controller",resource="configmaps",version="v1"}`,
		`informer_processing_latency_seconds_bucket{group="",name="clientgo-controller",resource="configmaps",version="v1",`,
		`informer_store_resource_version{group="",name="clientgo-controller",resource="configmaps",version="v1"}`,
		`informer_handler_pending_notifications{group="",handler="`,
		`informer_handler_processing_latency_seconds_bucket{group="",handler="`,
	} {
		require.Contains(t, page, want)
	}
	require.Equal(t, 1, strings.Count(page, `workqueue_adds_total{name="configmap-status"}`), "the queue's adds once: the traced queue reports nothing of its own")
	_, err = legacyregistry.DefaultGatherer.Gather()
	require.NoError(t, err, "legacyregistry gathers")
}
