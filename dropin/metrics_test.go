package dropin_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/metrics"
)

// The global MeterProvider is set once per test process: the delegating
// instruments follow only the first otel.SetMeterProvider. Tests that need
// it use this one and their own names; the test of a provider set later
// runs in a child process.
var (
	meterOnce   sync.Once
	meterReader *sdkmetric.ManualReader
)

func installMeterProvider() *sdkmetric.ManualReader {
	meterOnce.Do(func() {
		meterReader = sdkmetric.NewManualReader()
		otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(meterReader)))
	})
	return meterReader
}

func collectMetrics(t testing.TB, r *sdkmetric.ManualReader) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	return rm
}

// dataPoint is one data point of metric name whose attributes are exactly
// want: its value (sum, gauge, or a histogram's count) and histogram.
type dataPoint struct {
	found  bool
	value  float64
	bounds []float64
	attrs  attribute.Set
}

func metricPoint(rm metricdata.ResourceMetrics, name string, want map[string]string) dataPoint {
	match := func(set attribute.Set) bool {
		if set.Len() != len(want) {
			return false
		}
		for k, v := range want {
			if got, ok := set.Value(attribute.Key(k)); !ok || (v != "*" && got.AsString() != v) {
				return false
			}
		}
		return true
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					if match(p.Attributes) {
						return dataPoint{true, float64(p.Value), nil, p.Attributes}
					}
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					if match(p.Attributes) {
						return dataPoint{true, float64(p.Value), nil, p.Attributes}
					}
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					if match(p.Attributes) {
						return dataPoint{true, p.Value, nil, p.Attributes}
					}
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					if match(p.Attributes) {
						return dataPoint{true, float64(p.Count), p.Bounds, p.Attributes}
					}
				}
			}
		}
	}
	return dataPoint{}
}

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// metricsRuns numbers the runs of a test in one process (-count): the
// global provider accumulates, and client-go's informer names are unique.
var metricsRuns atomic.Int64

// meteredController is a small controller: an informer whose handler
// adds each pod's key to a traced queue with our metrics provider, and a
// worker that takes each key, and retries each key once (AddRateLimited).
type meteredController struct {
	informer cache.SharedIndexInformer
	queue    workqueue.TypedRateLimitingInterface[string]
	calls    atomic.Int64
	reg      cache.ResourceEventHandlerRegistration
	done     sync.WaitGroup
	retried  sync.Map
	worked   atomic.Int64
}

// newMeteredController: the OpenTelemetry route, each provider given
// where client-go takes it: the informer's options, the queue's config,
// and the informer's handler provider. informerName "" leaves the
// informer without an Identifier.
func newMeteredController(t *testing.T, srv *apiserver.Server, informerName, queueName string) *meteredController {
	opts := cache.SharedIndexInformerOptions{InformerMetricsProvider: dropin.InformerMetricsProvider()}
	if informerName != "" {
		n, err := cache.NewInformerName(informerName)
		require.NoError(t, err)
		opts.Identifier = n.WithResource(podsGVR)
	}
	c := &meteredController{
		informer: dropin.NewSharedIndexInformerWithOptions(inProcessLW(srv), &corev1.Pod{}, opts),
	}
	require.NoError(t, c.informer.(*dropin.Informer).SetHandlerMetricsProvider(dropin.OTelHandlerMetricsProvider()))
	c.queue = dropin.NewTracedQueue(queueName, workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: queueName, MetricsProvider: dropin.WorkqueueMetricsProvider()}))
	var err error
	c.reg, err = c.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			c.calls.Add(1)
			key, _ := cache.MetaNamespaceKeyFunc(obj)
			c.queue.Add(key)
		},
		UpdateFunc: func(_, obj any) {
			c.calls.Add(1)
			key, _ := cache.MetaNamespaceKeyFunc(obj)
			c.queue.Add(key)
		},
	})
	require.NoError(t, err)
	return c
}

func (c *meteredController) start(ctx context.Context) {
	c.done.Go(func() { c.informer.RunWithContext(ctx) })
	c.done.Go(func() {
		for {
			key, shutdown := c.queue.Get()
			if shutdown {
				return
			}
			if _, again := c.retried.LoadOrStore(key, true); !again {
				c.queue.AddRateLimited(key)
			} else {
				c.queue.Forget(key)
			}
			c.worked.Add(1)
			c.queue.Done(key)
		}
	})
}

func (c *meteredController) stop(cancel func()) {
	cancel()
	c.queue.ShutDown()
	c.done.Wait()
}

func createPods(t *testing.T, srv *apiserver.Server, prefix string, n int) {
	for i := range n {
		_, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("%s-%d", prefix, i)}})
		require.NoError(t, err)
	}
}

// TestMetricsReported runs a named informer, an unnamed one and a traced
// queue (tracing off) on the embedded API server, on the OpenTelemetry
// providers (InformerMetricsProvider in the options, WorkqueueMetricsProvider
// in the queue's config, OTelHandlerMetricsProvider for the handlers), and
// requires every metric of docs/07-your-controller.md's "Metrics" with
// client-go's labels: name, group, version, resource for the informer's
// three (from the reserved Identifier; the unnamed informer reports none,
// as client-go's does not), name for the queue's seven, and the informer's
// four and handler for the two per handler. synctest's clock lets client-go
// queue's 500ms unfinished-work loop run and makes the waits exact.
func TestMetricsReported(t *testing.T) {
	reader := installMeterProvider()
	// The server runs outside the bubble (its listener would keep the
	// bubble from ever being idle); the informers reach it in process.
	srv := startServer(t)
	synctest.Test(t, func(t *testing.T) {
		createPods(t, srv, "before", 3)

		run := metricsRuns.Add(1)
		informerName, queueName := fmt.Sprintf("metrics-test-%d", run), fmt.Sprintf("metrics-test-queue-%d", run)
		named := newMeteredController(t, srv, informerName, queueName)
		unnamed := newMeteredController(t, srv, "", queueName+"-unnamed")
		ctx, cancel := context.WithCancel(context.Background())
		named.start(ctx)
		unnamed.start(ctx)
		defer unnamed.stop(cancel)
		defer named.stop(cancel)
		synctest.Wait()
		require.True(t, cache.WaitFor(ctx, "", named.reg.HasSyncedChecker()))
		createPods(t, srv, "after", 2)
		time.Sleep(2 * time.Second) // the retries' backoff, two ticks of the unfinished-work loop
		synctest.Wait()
		require.EqualValues(t, 5, named.calls.Load())
		require.EqualValues(t, 10, named.worked.Load())

		rm := collectMetrics(t, reader)
		informer := map[string]string{"name": informerName, "group": "", "version": "v1", "resource": "pods"}
		for _, name := range []string{metrics.InformerQueuedItems, metrics.InformerProcessingLatency, metrics.InformerStoreResourceVersion} {
			require.True(t, metricPoint(rm, name, informer).found, "%s %v", name, informer)
		}
		require.Equal(t, metrics.InformerBuckets, metricPoint(rm, metrics.InformerProcessingLatency, informer).bounds)
		require.Zero(t, metricPoint(rm, metrics.InformerQueuedItems, informer).value, "all popped")
		rv, err := metrics.ParseResourceVersion(named.informer.GetStore().(interface{ LastStoreSyncResourceVersion() string }).LastStoreSyncResourceVersion())
		require.NoError(t, err)
		require.Positive(t, rv)
		require.EqualValues(t, rv, metricPoint(rm, metrics.InformerStoreResourceVersion, informer).value)
		// An informer without an Identifier reports none of client-go's
		// three, as client-go's does not.
		require.False(t, metricPoint(rm, metrics.InformerQueuedItems, map[string]string{"name": "*", "group": "*", "version": "*", "resource": ""}).found)

		handler := map[string]string{"name": informerName, "group": "", "version": "v1", "resource": "pods", "handler": "*"}
		pending := metricPoint(rm, metrics.HandlerPendingNotifications, handler)
		require.True(t, pending.found)
		require.Zero(t, pending.value)
		latency := metricPoint(rm, metrics.HandlerProcessingLatency, handler)
		require.True(t, latency.found)
		require.EqualValues(t, 5, latency.value, "one observation per handler call")
		h, _ := latency.attrs.Value("handler")
		require.Equal(t, "github.com/informer-anatomy/informer-anatomy/dropin_test.newMeteredController#0", h.AsString(), "the listener's informer.listener")
		// The unnamed informer's handlers are named by its type.
		unnamedHandler := map[string]string{"name": "*v1.Pod", "group": "", "version": "", "resource": "", "handler": "*"}
		require.True(t, metricPoint(rm, metrics.HandlerProcessingLatency, unnamedHandler).found)

		queue := map[string]string{"name": queueName}
		for _, name := range []string{metrics.WorkqueueDepth, metrics.WorkqueueAdds, metrics.WorkqueueQueueDuration,
			metrics.WorkqueueWorkDuration, metrics.WorkqueueUnfinishedWork, metrics.WorkqueueLongestRunningProcessor, metrics.WorkqueueRetries} {
			require.True(t, metricPoint(rm, name, queue).found, name)
		}
		require.EqualValues(t, 10, metricPoint(rm, metrics.WorkqueueAdds, queue).value, "5 keys, each added and retried once")
		require.EqualValues(t, 5, metricPoint(rm, metrics.WorkqueueRetries, queue).value)
		require.EqualValues(t, 10, metricPoint(rm, metrics.WorkqueueWorkDuration, queue).value)
		require.Zero(t, metricPoint(rm, metrics.WorkqueueDepth, queue).value)
	})
}
