package dropin_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
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

// newMeteredController: innerProvider gives the queue's inner queue
// WorkqueueMetricsProvider; without, the traced queue reports itself.
func newMeteredController(t *testing.T, srv *apiserver.Server, informerName, queueName string, innerProvider bool) *meteredController {
	opts := cache.SharedIndexInformerOptions{}
	if informerName != "" {
		n, err := cache.NewInformerName(informerName)
		require.NoError(t, err)
		opts.Identifier = n.WithResource(podsGVR)
	}
	c := &meteredController{
		informer: dropin.NewSharedIndexInformerWithOptions(inProcessLW(srv), &corev1.Pod{}, opts),
	}
	var mp workqueue.MetricsProvider
	if innerProvider {
		mp = dropin.WorkqueueMetricsProvider()
	}
	c.queue = dropin.NewTracedQueue(queueName, workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: queueName, MetricsProvider: mp}))
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
// queue (tracing off) on the embedded API server and requires every metric
// of docs/07-your-controller.md's "Metrics" with client-go's attributes:
// name, group, version, resource for the informer's three (name from the
// Identifier, else the type), name for the queue's seven, name and handler
// for the two per handler. synctest's clock lets the queue's 500ms
// unfinished-work loop run and makes the waits exact.
func TestMetricsReported(t *testing.T) {
	reader := installMeterProvider()
	// The server runs outside the bubble (its listener would keep the
	// bubble from ever being idle); the informers reach it in process.
	srv := startServer(t)
	synctest.Test(t, func(t *testing.T) {
		createPods(t, srv, "before", 3)

		run := metricsRuns.Add(1)
		informerName, queueName := fmt.Sprintf("metrics-test-%d", run), fmt.Sprintf("metrics-test-queue-%d", run)
		named := newMeteredController(t, srv, informerName, queueName, true)
		unnamed := dropin.NewSharedIndexInformer(inProcessLW(srv), &corev1.Pod{}, 0, cache.Indexers{})
		ctx, cancel := context.WithCancel(context.Background())
		named.start(ctx)
		go unnamed.RunWithContext(ctx)
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
		// An informer without an Identifier is named by its type.
		unnamedAttrs := map[string]string{"name": "*v1.Pod", "group": "", "version": "", "resource": ""}
		require.True(t, metricPoint(rm, metrics.InformerQueuedItems, unnamedAttrs).found)

		handler := map[string]string{"name": informerName, "handler": "*"}
		pending := metricPoint(rm, metrics.HandlerPendingNotifications, handler)
		require.True(t, pending.found)
		require.Zero(t, pending.value)
		latency := metricPoint(rm, metrics.HandlerProcessingLatency, handler)
		require.True(t, latency.found)
		require.EqualValues(t, 5, latency.value, "one observation per handler call")
		h, _ := latency.attrs.Value("handler")
		require.Equal(t, "github.com/informer-anatomy/informer-anatomy/dropin_test.newMeteredController#0", h.AsString(), "the listener's informer.listener")

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

const childEnv = "DROPIN_METRICS_CHILD"

// TestMetricsProviderSetLater runs TestMetricsChild in a process of its
// own, where no MeterProvider has been set: with none, nothing is recorded
// and the informer and queue work; one set after both were built is
// followed.
func TestMetricsProviderSetLater(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestMetricsChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: TestMetricsChild")
}

// TestMetricsChild is TestMetricsProviderSetLater's child; run on its own
// it does nothing (the process's global provider may already be set).
func TestMetricsChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		return
	}
	require.False(t, metrics.Enabled(), "no provider set yet")
	// The server runs outside the bubble (its listener would keep the
	// bubble from ever being idle); the informers reach it in process.
	srv := startServer(t)
	synctest.Test(t, func(t *testing.T) {
		createPods(t, srv, "before", 3)
		c := newMeteredController(t, srv, "later", "later-queue", true)
		// The same controller on a queue that reports its metrics itself.
		self := newMeteredController(t, srv, "later-self", "later-self-queue", false)
		ctx, cancel := context.WithCancel(context.Background())
		c.start(ctx)
		defer c.stop(cancel)
		self.start(ctx)
		defer self.stop(cancel)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		require.EqualValues(t, 3, c.calls.Load(), "without a provider the informer works")
		require.EqualValues(t, 6, c.worked.Load(), "without a provider the queue works")
		require.EqualValues(t, 6, self.worked.Load())

		reader := sdkmetric.NewManualReader()
		otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
		require.True(t, metrics.Enabled())
		rm := collectMetrics(t, reader)
		require.False(t, metricPoint(rm, metrics.WorkqueueAdds, map[string]string{"name": "later-queue"}).found,
			"nothing recorded before the provider was set")
		require.False(t, metricPoint(rm, metrics.HandlerProcessingLatency, map[string]string{"name": "later", "handler": "*"}).found)

		createPods(t, srv, "after", 2)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		rm = collectMetrics(t, reader)
		informer := map[string]string{"name": "later", "group": "", "version": "v1", "resource": "pods"}
		require.Positive(t, metricPoint(rm, metrics.InformerProcessingLatency, informer).value)
		require.True(t, metricPoint(rm, metrics.InformerQueuedItems, informer).found)
		require.EqualValues(t, 2, metricPoint(rm, metrics.HandlerProcessingLatency, map[string]string{"name": "later", "handler": "*"}).value)
		queue := map[string]string{"name": "later-queue"}
		require.EqualValues(t, 4, metricPoint(rm, metrics.WorkqueueAdds, queue).value, "the two new keys, added and retried")
		require.EqualValues(t, 2, metricPoint(rm, metrics.WorkqueueRetries, queue).value)
		require.True(t, metricPoint(rm, metrics.WorkqueueUnfinishedWork, queue).found)
		// The self-reporting queue follows the provider set after it was
		// built, and counts what happened since, as the inner provider's.
		selfQueue := map[string]string{"name": "later-self-queue"}
		require.EqualValues(t, 4, metricPoint(rm, metrics.WorkqueueAdds, selfQueue).value)
		require.EqualValues(t, 2, metricPoint(rm, metrics.WorkqueueRetries, selfQueue).value)
		require.EqualValues(t, 0, metricPoint(rm, metrics.WorkqueueDepth, selfQueue).value)
		require.EqualValues(t, 4, metricPoint(rm, metrics.WorkqueueQueueDuration, selfQueue).value, "four Gets")
		require.True(t, metricPoint(rm, metrics.WorkqueueUnfinishedWork, selfQueue).found)
	})
}

// An informer that was built but never run has nothing to report, and a
// collection must survive reading it: one built in a synctest bubble (a
// user's unit test) holds channels of that bubble, and a collection from
// outside it, by any later test, received from one (a handler's
// HasSynced, in chapter 5's ReadStats) and ended the whole test process
// with "receive on synctest channel from outside bubble". It did, in a CI
// run; ReadStats now reads a flag (processorListener.syncedFlag).
func TestMetricsSkipAnInformerThatNeverRan(t *testing.T) {
	reader := installMeterProvider()
	s := newServer(t)
	// Informer names are unique in a process: one per run (-count).
	id := fmt.Sprintf("never-ran-%d", metricsRuns.Add(1))
	name, err := cache.NewInformerName(id)
	require.NoError(t, err)
	var inf cache.SharedIndexInformer
	synctest.Test(t, func(t *testing.T) {
		inf = dropin.NewSharedIndexInformerWithOptions(inProcessLW(s.srv), &corev1.Pod{},
			cache.SharedIndexInformerOptions{Identifier: name.WithResource(podsGVR)})
		_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{})
		require.NoError(t, err)
	})
	rm := collectMetrics(t, reader) // outside the bubble, the informer still held
	require.False(t, metricPoint(rm, metrics.InformerQueuedItems, map[string]string{"name": id, "group": "*", "version": "*", "resource": "*"}).found,
		"an informer that never ran reports no queue")
	runtime.KeepAlive(inf)
}
