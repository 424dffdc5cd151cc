package main

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-anatomy/informer-anatomy/examples/internal/metricsetup"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

type (
	workqueueRateLimiter  = workqueue.TypedRateLimiter[reconcile.Request]
	workqueueRateLimiting = workqueue.TypedRateLimitingInterface[reconcile.Request]
)

// workqueueLabels gathers ctrlmetrics.Registry and returns, per workqueue_*
// family, the label sets of controller's series with the name and
// controller values blanked, sorted: what a dashboard reading that
// controller's queue sees, independent of its name.
func workqueueLabels(t *testing.T, controller string) map[string][]string {
	t.Helper()
	mfs, err := ctrlmetrics.Registry.Gather()
	require.NoError(t, err, "controller-runtime's registry gathers")
	out := map[string][]string{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "workqueue_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["controller"] != controller {
				continue
			}
			require.Equal(t, controller, labels["name"], "%s: name is the controller's", mf.GetName())
			labels["name"], labels["controller"] = "<controller>", "<controller>"
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(labels)) {
				parts = append(parts, k+"="+labels[k])
			}
			out[mf.GetName()] = append(out[mf.GetName()], strings.Join(parts, ","))
		}
		sort.Strings(out[mf.GetName()])
	}
	return out
}

// TestManagerWorkqueueMetricsAsWithoutDropin: a manager whose cache is
// built on dropin (ManagerOptions), over the embedded API server, runs two
// controllers of ConfigMaps: "on-dropin" on the example's NewQueue
// (crqueue.NewQueue: the priority queue, traced) and "without-dropin" on
// controller-runtime's default queue. After both reconciled the same
// objects, controller-runtime's registry holds the same workqueue_*
// families for both, with the same labels: name and controller on every
// series and priority on workqueue_depth, as controller-runtime's provider
// labels them. Until issue 37, crqueue.NewQueue gave the priority queue
// dropin's OpenTelemetry provider, and the traced queue's series had
// neither controller nor priority.
func TestManagerWorkqueueMetricsAsWithoutDropin(t *testing.T) {
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	for _, name := range []string{"a", "b"} {
		_, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}})
		require.NoError(t, err)
	}
	opts := ManagerOptions("ns")
	opts.MapperProvider = func(*rest.Config, *http.Client) (meta.RESTMapper, error) {
		m := meta.NewDefaultRESTMapper(nil)
		m.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
		return m, nil
	}
	mgr, err := ctrl.NewManager(srv.Config(), opts)
	require.NoError(t, err)
	reconciled := map[string]chan struct{}{"on-dropin": make(chan struct{}, 10), "without-dropin": make(chan struct{}, 10)}
	for name, newQueue := range map[string]func(string, workqueueRateLimiter) workqueueRateLimiting{
		"on-dropin":      NewQueue,
		"without-dropin": nil, // controller-runtime's default
	} {
		done := reconciled[name]
		err := ctrl.NewControllerManagedBy(mgr).Named(name).
			WithOptions(controller.Options{SkipNameValidation: ptr.To(true), NewQueue: newQueue}).
			For(&corev1.ConfigMap{}).
			Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
				done <- struct{}{}
				return reconcile.Result{}, nil
			}))
		require.NoError(t, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-stopped)
	}()
	for name, ch := range reconciled {
		for range 2 {
			select {
			case <-ch:
			case <-time.After(time.Minute):
				t.Fatalf("%s: the two ConfigMaps were not reconciled", name)
			}
		}
	}
	// The work duration is observed at Done, after the reconcile returns.
	require.Eventually(t, func() bool {
		return len(workqueueLabels(t, "on-dropin")["workqueue_work_duration_seconds"]) > 0 &&
			len(workqueueLabels(t, "without-dropin")["workqueue_work_duration_seconds"]) > 0
	}, time.Minute, 10*time.Millisecond)

	ours, theirs := workqueueLabels(t, "on-dropin"), workqueueLabels(t, "without-dropin")
	require.Len(t, theirs, 7, "controller-runtime's seven workqueue families: %v", theirs)
	require.Equal(t, theirs, ours)
	require.True(t, slices.ContainsFunc(ours["workqueue_depth"], func(s string) bool { return strings.Contains(s, "priority=") }),
		"workqueue_depth has the priority label: %v", ours["workqueue_depth"])
}

// TestMetricsOnManagerRegistry: with the example's metrics wiring
// (InstallHandlerMetrics: our per-handler pair on OpenTelemetry, read by an
// exporter registered on controller-runtime's metrics.Registry), the page
// the manager's metrics server serves holds our two per-handler metrics of
// a dropin informer and controller-runtime's own workqueue_* metrics of
// the example's queue (with controller), beside the rest of
// controller-runtime's, and the registry gathers without error. Until
// issue 37 the example's queue put a second set of workqueue_* series, of
// other help texts, on the same registry, and a Gather failed unless the
// MeterProvider had crqueue.MetricViews.
func TestMetricsOnManagerRegistry(t *testing.T) {
	stop, err := InstallHandlerMetrics()
	require.NoError(t, err)
	defer func() { _ = stop(context.Background()) }()

	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	_, err = srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}})
	require.NoError(t, err)
	opts := ManagerOptions("ns")
	opts.MapperProvider = func(*rest.Config, *http.Client) (meta.RESTMapper, error) {
		m := meta.NewDefaultRESTMapper(nil)
		m.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
		return m, nil
	}
	mgr, err := ctrl.NewManager(srv.Config(), opts)
	require.NoError(t, err)
	done := make(chan struct{}, 1)
	err = ctrl.NewControllerManagedBy(mgr).Named("metrics-test").
		WithOptions(controller.Options{SkipNameValidation: ptr.To(true), NewQueue: NewQueue}).
		For(&corev1.ConfigMap{}).
		Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			select {
			case done <- struct{}{}:
			default:
			}
			return reconcile.Result{}, nil
		}))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-stopped)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("ns/a was not reconciled")
	}

	var page string
	require.Eventually(t, func() bool {
		rec := httptest.NewRecorder()
		metricsetup.Handler(ctrlmetrics.Registry).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		require.Equal(t, http.StatusOK, rec.Code, "the page gathers: %s", rec.Body.String())
		page = rec.Body.String()
		return strings.Contains(page, `workqueue_work_duration_seconds_count{controller="metrics-test"`)
	}, time.Minute, 10*time.Millisecond)
	for _, want := range []string{
		`workqueue_depth{controller="metrics-test",name="metrics-test",priority=`,
		`workqueue_adds_total{controller="metrics-test",name="metrics-test"}`,
		`workqueue_queue_duration_seconds_bucket{controller="metrics-test",name="metrics-test"`,
		`workqueue_unfinished_work_seconds{controller="metrics-test",name="metrics-test"}`,
		`workqueue_longest_running_processor_seconds{controller="metrics-test",name="metrics-test"}`,
		`workqueue_retries_total{controller="metrics-test",name="metrics-test"}`,
		`informer_handler_pending_notifications{group="",handler="sigs.k8s.io/controller-runtime/pkg/handler.TypedEnqueueRequestForObject#0",name="*v1.ConfigMap"`,
		`informer_handler_processing_latency_seconds_bucket{group="",handler="sigs.k8s.io/controller-runtime/pkg/handler.TypedEnqueueRequestForObject#0",name="*v1.ConfigMap"`,
		// controller-runtime's own, on the same page.
		`# TYPE controller_runtime_reconcile_total counter`,
	} {
		require.Contains(t, page, want)
	}
	require.NotContains(t, page, `workqueue_adds_total{name="metrics-test"`, "no second, unlabelled series of the queue")
	_, err = ctrlmetrics.Registry.Gather()
	require.NoError(t, err)
}
