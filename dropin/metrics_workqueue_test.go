package dropin_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/metrics"
)

// Moved here from internal/metrics: the same-code test needs dropin's
// traced queue, and internal/metrics sits below the chapters, where no
// package (not even its tests) may import dropin (test/layers).

// wqRecorder is client-go's MetricsProvider keeping what the queue told it,
// the oracle of the same-code test: what a Prometheus provider such as
// component-base's would hold.
type wqRecorder struct {
	mu                        sync.Mutex
	depth, adds, retries      int
	latency, work             []float64
	unfinished, longest       float64
	unfinishedSet, longestSet bool
}

type wqGauge struct {
	r   *wqRecorder
	ptr *int
}

func (g wqGauge) Inc() { g.r.mu.Lock(); *g.ptr++; g.r.mu.Unlock() }
func (g wqGauge) Dec() { g.r.mu.Lock(); *g.ptr--; g.r.mu.Unlock() }

type wqHist struct {
	r   *wqRecorder
	ptr *[]float64
}

func (h wqHist) Observe(v float64) { h.r.mu.Lock(); *h.ptr = append(*h.ptr, v); h.r.mu.Unlock() }

type wqSet struct {
	r   *wqRecorder
	ptr *float64
	set *bool
}

func (s wqSet) Set(v float64) { s.r.mu.Lock(); *s.ptr, *s.set = v, true; s.r.mu.Unlock() }

func (r *wqRecorder) NewDepthMetric(string) workqueue.GaugeMetric       { return wqGauge{r, &r.depth} }
func (r *wqRecorder) NewAddsMetric(string) workqueue.CounterMetric      { return wqGauge{r, &r.adds} }
func (r *wqRecorder) NewLatencyMetric(string) workqueue.HistogramMetric { return wqHist{r, &r.latency} }
func (r *wqRecorder) NewWorkDurationMetric(string) workqueue.HistogramMetric {
	return wqHist{r, &r.work}
}
func (r *wqRecorder) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return wqSet{r, &r.unfinished, &r.unfinishedSet}
}
func (r *wqRecorder) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return wqSet{r, &r.longest, &r.longestSet}
}
func (r *wqRecorder) NewRetriesMetric(string) workqueue.CounterMetric { return wqGauge{r, &r.retries} }

// wqBuckets counts obs as an explicit-bucket histogram with bounds does
// (upper bounds inclusive, one overflow bucket).
func wqBuckets(obs []float64, bounds []float64) []uint64 {
	out := make([]uint64, len(bounds)+1)
	for _, v := range obs {
		i := 0
		for i < len(bounds) && v > bounds[i] {
			i++
		}
		out[i]++
	}
	return out
}

func wqSum(obs []float64) float64 {
	var s float64
	for _, v := range obs {
		s += v
	}
	return s
}

var wqRuns atomic.Int64

// wqKind is one of client-go's three queues: how to make it with a
// provider, and how to wrap it.
type wqKind struct {
	name    string
	retries bool // a delaying queue: workqueue_retries_total exists
	make    func(name string, mp workqueue.MetricsProvider) workqueue.TypedInterface[string]
	wrap    func(name string, inner workqueue.TypedInterface[string]) workqueue.TypedInterface[string]
}

var wqKinds = []wqKind{
	{"rate-limiting", true,
		func(name string, mp workqueue.MetricsProvider) workqueue.TypedInterface[string] {
			return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
				workqueue.TypedRateLimitingQueueConfig[string]{Name: name, MetricsProvider: mp})
		},
		func(name string, inner workqueue.TypedInterface[string]) workqueue.TypedInterface[string] {
			return dropin.NewTracedQueue(name, inner.(workqueue.TypedRateLimitingInterface[string]))
		}},
	{"delaying", true,
		func(name string, mp workqueue.MetricsProvider) workqueue.TypedInterface[string] {
			return workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: name, MetricsProvider: mp})
		},
		func(name string, inner workqueue.TypedInterface[string]) workqueue.TypedInterface[string] {
			return dropin.NewTracedDelayingQueue(name, inner.(workqueue.TypedDelayingInterface[string]))
		}},
	{"plain", false,
		func(name string, mp workqueue.MetricsProvider) workqueue.TypedInterface[string] {
			return workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: name, MetricsProvider: mp})
		},
		func(name string, inner workqueue.TypedInterface[string]) workqueue.TypedInterface[string] {
			return dropin.NewTracedPlainQueue(name, inner)
		}},
}

// TestWorkqueueMatchesClientGo feeds one random sequence of calls (fixed
// seed) to two client-go queues of one kind (rate-limiting, delaying,
// plain): one with a recording provider of client-go's interface, the
// oracle; the other behind dropin's wrapper, with tracing off and on.
//
//   - inner: the inner queue was given dropin.WorkqueueMetricsProvider. The
//     seven metrics (six for the plain queue, which has no retries) on the
//     global MeterProvider must hold what client-go told the wqRecorder:
//     the same adds, retries and depth, the same histogram observations
//     (count, sum, buckets), and the same last values of the two gauges
//     client-go sets every 500ms; the wrapper changes none of the inner
//     queue's numbers and adds none of its own (it reported its own until
//     issue 37, and every number was then doubled with a provider linked).
//   - none: the inner queue has a provider that records nothing; the
//     wrapper must then report nothing either.
//
// synctest's clock makes the durations exact.
func TestWorkqueueMatchesClientGo(t *testing.T) {
	reader := installMeterProvider()
	for _, kind := range wqKinds {
		for _, source := range []string{"none", "inner"} {
			for _, traced := range []bool{false, true} {
				for seed := uint64(1); seed <= 3; seed++ {
					t.Run(fmt.Sprintf("%s/%s/traced=%v/seed=%d", kind.name, source, traced, seed), func(t *testing.T) {
						// The global provider accumulates over -count runs: each
						// run has a series of its own.
						name := fmt.Sprintf("same-code-%d", wqRuns.Add(1))
						synctest.Test(t, func(t *testing.T) {
							rec := &wqRecorder{}
							oracle := kind.make(name, rec)
							var mp workqueue.MetricsProvider = noProvider{}
							if source == "inner" {
								mp = dropin.WorkqueueMetricsProvider()
							}
							ours := kind.wrap(name, kind.make(name, mp))
							if traced {
								tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter()))
								ours.(interface {
									SetTracerProvider(trace.TracerProvider)
								}).SetTracerProvider(tp)
							}
							wqRun(t, seed, oracle, ours)
							rm := collectMetrics(t, reader)
							if source == "none" {
								require.Nil(t, wqSeries(rm, name), "the wrapper reports nothing of its own")
								return
							}
							rec.mu.Lock()
							defer rec.mu.Unlock()
							wqRequireSame(t, rm, rec, name, kind.retries)
						})
					})
				}
			}
		}
	}
}

// noProvider is client-go's MetricsProvider that makes nothing: a queue
// given it records no metrics (as one given none, had no global provider
// been set with workqueue.SetProvider).
type noProvider struct{}

func (noProvider) NewDepthMetric(string) workqueue.GaugeMetric            { return wqNop{} }
func (noProvider) NewAddsMetric(string) workqueue.CounterMetric           { return wqNop{} }
func (noProvider) NewLatencyMetric(string) workqueue.HistogramMetric      { return wqNop{} }
func (noProvider) NewWorkDurationMetric(string) workqueue.HistogramMetric { return wqNop{} }
func (noProvider) NewRetriesMetric(string) workqueue.CounterMetric        { return wqNop{} }
func (noProvider) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return wqNop{}
}
func (noProvider) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return wqNop{}
}

type wqNop struct{}

func (wqNop) Inc()            {}
func (wqNop) Dec()            {}
func (wqNop) Set(float64)     {}
func (wqNop) Observe(float64) {}

// wqRun makes 400 random calls, each on both queues, then waits past a
// tick of the unfinished-work loops with work in hand. Calls a queue kind
// lacks are skipped. Everything still processing is Done and both queues
// are shut down when the test ends (a traced Get's registration,
// internal/handlerctx, lasts until its Done, and one left open is seen by
// the other tests of the package, which require none).
func wqRun(t *testing.T, seed uint64, oracle, ours workqueue.TypedInterface[string]) {
	queues := []workqueue.TypedInterface[string]{oracle, ours}
	var processing []string
	t.Cleanup(func() {
		for _, k := range processing {
			for _, q := range queues {
				q.Done(k)
			}
		}
		for _, q := range queues {
			q.ShutDown()
		}
	})
	rng := rand.New(rand.NewPCG(seed, 42))
	for range 400 {
		key := fmt.Sprintf("k%d", rng.IntN(8))
		switch op := rng.IntN(10); {
		case op < 3:
			for _, q := range queues {
				q.Add(key)
			}
		case op == 3:
			d := time.Duration(rng.IntN(3)) * 20 * time.Millisecond
			for _, q := range queues {
				if dq, ok := q.(workqueue.TypedDelayingInterface[string]); ok {
					dq.AddAfter(key, d)
				}
			}
		case op == 4:
			for _, q := range queues {
				if rq, ok := q.(workqueue.TypedRateLimitingInterface[string]); ok {
					rq.AddRateLimited(key)
				}
			}
		case op == 5:
			for _, q := range queues {
				if rq, ok := q.(workqueue.TypedRateLimitingInterface[string]); ok {
					rq.Forget(key)
				}
			}
		case op < 8:
			require.Equal(t, oracle.Len(), ours.Len())
			if oracle.Len() == 0 {
				continue
			}
			a, _ := oracle.Get()
			b, _ := ours.Get()
			require.Equal(t, a, b)
			processing = append(processing, a)
		case op == 8 && len(processing) > 0:
			i := rng.IntN(len(processing))
			for _, q := range queues {
				q.Done(processing[i])
			}
			processing = append(processing[:i], processing[i+1:]...)
		default:
			time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
			synctest.Wait()
		}
	}
	time.Sleep(time.Second)
	synctest.Wait()
}

// wqRequireSame: the metrics of name in rm hold what rec was told.
func wqRequireSame(t *testing.T, rm metricdata.ResourceMetrics, rec *wqRecorder, name string, retries bool) {
	t.Helper()
	attrs := map[string]string{"name": name}
	require.Positive(t, rec.adds)
	require.NotEmpty(t, rec.work)
	require.True(t, rec.unfinishedSet)
	require.Equal(t, float64(rec.depth), wqLookup(t, rm, metrics.WorkqueueDepth, attrs).value, "depth")
	require.Equal(t, float64(rec.adds), wqLookup(t, rm, metrics.WorkqueueAdds, attrs).value, "adds")
	if retries {
		require.Positive(t, rec.retries)
		require.Equal(t, float64(rec.retries), wqLookup(t, rm, metrics.WorkqueueRetries, attrs).value, "retries")
	} else {
		require.False(t, wqLookup(t, rm, metrics.WorkqueueRetries, attrs).found, "a plain queue has no retries")
	}
	// client-go sums the unfinished work over a map, in a random order:
	// the last bit may differ between the two.
	require.InDelta(t, rec.unfinished, wqLookup(t, rm, metrics.WorkqueueUnfinishedWork, attrs).value, 1e-9, "unfinished")
	require.Equal(t, rec.longest, wqLookup(t, rm, metrics.WorkqueueLongestRunningProcessor, attrs).value, "longest")
	for _, h := range []struct {
		metric string
		obs    []float64
	}{{metrics.WorkqueueQueueDuration, rec.latency}, {metrics.WorkqueueWorkDuration, rec.work}} {
		p := wqLookup(t, rm, h.metric, attrs)
		require.True(t, p.found, h.metric)
		require.Equal(t, uint64(len(h.obs)), p.hist.Count, h.metric)
		require.InDelta(t, wqSum(h.obs), p.hist.Sum, 1e-9, h.metric)
		require.Equal(t, metrics.WorkqueueBuckets, p.hist.Bounds, h.metric)
		require.Equal(t, wqBuckets(h.obs, metrics.WorkqueueBuckets), p.hist.BucketCounts, h.metric)
	}
}

func wqFind(rm metricdata.ResourceMetrics, name string) *metricdata.Metrics {
	for _, sm := range rm.ScopeMetrics {
		for i := range sm.Metrics {
			if sm.Metrics[i].Name == name {
				return &sm.Metrics[i]
			}
		}
	}
	return nil
}

func wqMatches(set attribute.Set, want map[string]string) bool {
	if set.Len() != len(want) {
		return false
	}
	for k, v := range want {
		got, ok := set.Value(attribute.Key(k))
		if !ok || got.AsString() != v {
			return false
		}
	}
	return true
}

// wqPoint is one data wqPoint of metric name with exactly the attributes want:
// its value (wqSum or gauge) or, for a histogram, the histogram.
type wqPoint struct {
	found bool
	value float64
	hist  metricdata.HistogramDataPoint[float64]
}

func wqLookup(t testing.TB, rm metricdata.ResourceMetrics, name string, want map[string]string) wqPoint {
	t.Helper()
	m := wqFind(rm, name)
	if m == nil {
		return wqPoint{}
	}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			if wqMatches(p.Attributes, want) {
				return wqPoint{found: true, value: float64(p.Value)}
			}
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			if wqMatches(p.Attributes, want) {
				return wqPoint{found: true, value: float64(p.Value)}
			}
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			if wqMatches(p.Attributes, want) {
				return wqPoint{found: true, value: p.Value}
			}
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			if wqMatches(p.Attributes, want) {
				return wqPoint{found: true, hist: p, value: float64(p.Count)}
			}
		}
	default:
		t.Fatalf("%s: unexpected data %T", name, m.Data)
	}
	return wqPoint{}
}

// wqSeries is the first workqueue metric with a series of name, or nil.
func wqSeries(rm metricdata.ResourceMetrics, name string) *metricdata.Metrics {
	for _, metric := range []string{metrics.WorkqueueDepth, metrics.WorkqueueAdds, metrics.WorkqueueQueueDuration,
		metrics.WorkqueueWorkDuration, metrics.WorkqueueUnfinishedWork, metrics.WorkqueueLongestRunningProcessor, metrics.WorkqueueRetries} {
		if metricPoint(rm, metric, map[string]string{"name": name}).found {
			return wqFind(rm, metric)
		}
	}
	return nil
}
