package crqueue_test

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
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/dropin/crqueue"
)

var (
	meterOnce   sync.Once
	meterReader *sdkmetric.ManualReader
	runs        atomic.Int64
)

// The global MeterProvider follows only the first provider set: every
// test records into this one and tells its series apart by name.
func installMeterProvider() *sdkmetric.ManualReader {
	meterOnce.Do(func() {
		meterReader = sdkmetric.NewManualReader()
		otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(meterReader)))
	})
	return meterReader
}

// counts is what a queue's metrics hold at the end: the counters, and the
// number of observations of each histogram.
type counts struct {
	depth, adds, retries, latency, work int64
}

// recorder is client-go's MetricsProvider counting what the priority
// queue tells it: the oracle.
type recorder struct {
	mu sync.Mutex
	c  counts
}

type recMetric struct {
	r   *recorder
	ptr *int64
}

func (m recMetric) Inc()            { m.r.mu.Lock(); *m.ptr++; m.r.mu.Unlock() }
func (m recMetric) Dec()            { m.r.mu.Lock(); *m.ptr--; m.r.mu.Unlock() }
func (m recMetric) Observe(float64) { m.Inc() }
func (m recMetric) Set(float64)     {}

func (r *recorder) NewDepthMetric(string) workqueue.GaugeMetric  { return recMetric{r, &r.c.depth} }
func (r *recorder) NewAddsMetric(string) workqueue.CounterMetric { return recMetric{r, &r.c.adds} }
func (r *recorder) NewLatencyMetric(string) workqueue.HistogramMetric {
	return recMetric{r, &r.c.latency}
}
func (r *recorder) NewWorkDurationMetric(string) workqueue.HistogramMetric {
	return recMetric{r, &r.c.work}
}
func (r *recorder) NewRetriesMetric(string) workqueue.CounterMetric {
	return recMetric{r, &r.c.retries}
}
func (r *recorder) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return recMetric{r, new(int64)}
}
func (r *recorder) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return recMetric{r, new(int64)}
}

// otelCounts reads name's series from rm.
func otelCounts(t *testing.T, rm metricdata.ResourceMetrics, name string) counts {
	t.Helper()
	var c counts
	match := func(s attribute.Set) bool {
		v, ok := s.Value("name")
		return ok && s.Len() == 1 && v.AsString() == name
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			var ptr *int64
			switch m.Name {
			case "workqueue_depth":
				ptr = &c.depth
			case "workqueue_adds_total":
				ptr = &c.adds
			case "workqueue_retries_total":
				ptr = &c.retries
			case "workqueue_queue_duration_seconds":
				ptr = &c.latency
			case "workqueue_work_duration_seconds":
				ptr = &c.work
			default:
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					if match(p.Attributes) {
						*ptr += p.Value
					}
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					if match(p.Attributes) {
						*ptr += int64(p.Count)
					}
				}
			}
		}
	}
	return c
}

// TestTracedPriorityQueueReportsMetrics: one sequence of calls on a bare
// priority queue with a recording provider (the oracle) and on the traced
// one, whose inner reports on dropin.WorkqueueMetricsProvider ("inner") or
// to a provider nobody reads ("none"). The wrapper reports nothing of its
// own: with "inner" the counts on the global MeterProvider equal the
// oracle's (the priority queue's rules, an add counts when the key becomes
// ready, a retry is an add with a delay), once; with "none" there are none.
// Until issue 37 the wrapper also reported, and with a provider linked
// every queue showed twice.
func TestTracedPriorityQueueReportsMetrics(t *testing.T) {
	reader := installMeterProvider()
	for _, source := range []string{"none", "inner"} {
		t.Run(source, func(t *testing.T) {
			name := fmt.Sprintf("crqueue-metrics-%d", runs.Add(1))
			synctest.Test(t, func(t *testing.T) {
				rec := &recorder{}
				oracle := priorityqueue.New(name, func(o *priorityqueue.Opts[string]) { o.MetricProvider = rec })
				var mp workqueue.MetricsProvider = &recorder{} // records to nowhere we read
				if source == "inner" {
					mp = dropin.WorkqueueMetricsProvider()
				}
				ours := crqueue.NewTracedPriorityQueue(name, priorityqueue.New(name, func(o *priorityqueue.Opts[string]) { o.MetricProvider = mp }))
				queues := []priorityqueue.PriorityQueue[string]{oracle, ours}
				defer func() {
					for _, q := range queues {
						q.ShutDown()
					}
				}()
				for _, q := range queues {
					q.Add("a")
					q.Add("a")                   // merged: no add
					q.AddAfter("b", time.Second) // a retry, waiting
					q.AddAfter("c", 0)           // ready: an add, no retry
					q.AddAfter("a", time.Minute) // merged into the ready a
					q.AddWithOpts(priorityqueue.AddOpts{After: time.Hour}, "d")
					q.Add("d") // the waiting d made ready: an add
				}
				synctest.Wait()
				for range 3 {
					a, _ := oracle.Get()
					b, _ := ours.Get()
					require.Equal(t, a, b)
					oracle.Done(a)
					ours.Done(b)
				}
				time.Sleep(2 * time.Second) // b fires: an add
				synctest.Wait()
				rm := metricdata.ResourceMetrics{}
				require.NoError(t, reader.Collect(context.Background(), &rm))
				rec.mu.Lock()
				want := rec.c
				rec.mu.Unlock()
				require.Equal(t, counts{depth: 1, adds: 4, retries: 3, latency: 3, work: 3}, want, "the oracle")
				if source == "none" {
					require.Equal(t, counts{}, otelCounts(t, rm, name), "the wrapper reports nothing of its own")
					return
				}
				require.Equal(t, want, otelCounts(t, rm, name))
			})
		})
	}
}
