package metrics_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/metrics"
)

// recorder is client-go's MetricsProvider keeping what the queue told it,
// the oracle of the same-code test: what a Prometheus provider such as
// component-base's would hold.
type recorder struct {
	mu                        sync.Mutex
	depth, adds, retries      int
	latency, work             []float64
	unfinished, longest       float64
	unfinishedSet, longestSet bool
}

type recGauge struct {
	r   *recorder
	ptr *int
}

func (g recGauge) Inc() { g.r.mu.Lock(); *g.ptr++; g.r.mu.Unlock() }
func (g recGauge) Dec() { g.r.mu.Lock(); *g.ptr--; g.r.mu.Unlock() }

type recHist struct {
	r   *recorder
	ptr *[]float64
}

func (h recHist) Observe(v float64) { h.r.mu.Lock(); *h.ptr = append(*h.ptr, v); h.r.mu.Unlock() }

type recSet struct {
	r   *recorder
	ptr *float64
	set *bool
}

func (s recSet) Set(v float64) { s.r.mu.Lock(); *s.ptr, *s.set = v, true; s.r.mu.Unlock() }

func (r *recorder) NewDepthMetric(string) workqueue.GaugeMetric       { return recGauge{r, &r.depth} }
func (r *recorder) NewAddsMetric(string) workqueue.CounterMetric      { return recGauge{r, &r.adds} }
func (r *recorder) NewLatencyMetric(string) workqueue.HistogramMetric { return recHist{r, &r.latency} }
func (r *recorder) NewWorkDurationMetric(string) workqueue.HistogramMetric {
	return recHist{r, &r.work}
}
func (r *recorder) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return recSet{r, &r.unfinished, &r.unfinishedSet}
}
func (r *recorder) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return recSet{r, &r.longest, &r.longestSet}
}
func (r *recorder) NewRetriesMetric(string) workqueue.CounterMetric { return recGauge{r, &r.retries} }

// buckets counts obs as an explicit-bucket histogram with bounds does
// (upper bounds inclusive, one overflow bucket).
func buckets(obs []float64, bounds []float64) []uint64 {
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

func sum(obs []float64) float64 {
	var s float64
	for _, v := range obs {
		s += v
	}
	return s
}

var runs atomic.Int64

// TestWorkqueueMatchesClientGo feeds one random sequence of calls (fixed
// seed) to two client-go rate-limiting queues: one with a recording
// provider of client-go's interface, one with ours behind
// dropin.NewTracedQueue, with tracing off and on. The seven metrics of
// ours must hold what client-go told the recorder: the same adds, retries
// and depth, the same histogram observations (count, sum, buckets), and the
// same last values of the two gauges client-go sets every 500ms. synctest's
// clock makes the durations exact.
func TestWorkqueueMatchesClientGo(t *testing.T) {
	reader := installGlobal(t)
	for _, traced := range []bool{false, true} {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("traced=%v-seed=%d", traced, seed), func(t *testing.T) {
				// The global provider accumulates over -count runs: each run
				// has a series of its own.
				name := fmt.Sprintf("same-code-%d", runs.Add(1))
				synctest.Test(t, func(t *testing.T) {
					rec := &recorder{}
					oracle := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
						workqueue.TypedRateLimitingQueueConfig[string]{Name: name, MetricsProvider: rec})
					inner := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
						workqueue.TypedRateLimitingQueueConfig[string]{Name: name, MetricsProvider: dropin.WorkqueueMetricsProvider()})
					ours := dropin.NewTracedQueue(name, inner)
					if traced {
						tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter()))
						ours.(*dropin.TracedQueue[string]).SetTracerProvider(tp)
					}
					queues := []workqueue.TypedRateLimitingInterface[string]{oracle, ours}
					defer func() {
						for _, q := range queues {
							q.ShutDown()
						}
					}()
					rng := rand.New(rand.NewPCG(seed, 42))
					var processing []string
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
								q.AddAfter(key, d)
							}
						case op == 4:
							for _, q := range queues {
								q.AddRateLimited(key)
							}
						case op == 5:
							for _, q := range queues {
								q.Forget(key)
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
					// Past a tick of the unfinished-work loop, with work in hand.
					time.Sleep(time.Second)
					synctest.Wait()

					rm := collect(t, reader)
					attrs := map[string]string{"name": name}
					rec.mu.Lock()
					defer rec.mu.Unlock()
					require.Positive(t, rec.adds)
					require.Positive(t, rec.retries)
					require.NotEmpty(t, rec.work)
					require.True(t, rec.unfinishedSet)
					require.Equal(t, float64(rec.depth), lookup(t, rm, metrics.WorkqueueDepth, attrs).value, "depth")
					require.Equal(t, float64(rec.adds), lookup(t, rm, metrics.WorkqueueAdds, attrs).value, "adds")
					require.Equal(t, float64(rec.retries), lookup(t, rm, metrics.WorkqueueRetries, attrs).value, "retries")
					// client-go sums the unfinished work over a map, in a
					// random order: the last bit may differ between the two.
					require.InDelta(t, rec.unfinished, lookup(t, rm, metrics.WorkqueueUnfinishedWork, attrs).value, 1e-9, "unfinished")
					require.Equal(t, rec.longest, lookup(t, rm, metrics.WorkqueueLongestRunningProcessor, attrs).value, "longest")
					for _, h := range []struct {
						metric string
						obs    []float64
					}{{metrics.WorkqueueQueueDuration, rec.latency}, {metrics.WorkqueueWorkDuration, rec.work}} {
						p := lookup(t, rm, h.metric, attrs)
						require.True(t, p.found, h.metric)
						require.Equal(t, uint64(len(h.obs)), p.hist.Count, h.metric)
						require.InDelta(t, sum(h.obs), p.hist.Sum, 1e-9, h.metric)
						require.Equal(t, metrics.WorkqueueBuckets, p.hist.Bounds, h.metric)
						require.Equal(t, buckets(h.obs, metrics.WorkqueueBuckets), p.hist.BucketCounts, h.metric)
					}
				})
			})
		}
	}
}
