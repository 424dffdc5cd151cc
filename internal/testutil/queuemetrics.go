package testutil

import (
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// QueueMetrics is a workqueue.MetricsProvider (k8s.io/client-go/util/workqueue,
// metrics.go) that keeps what a queue reports of itself: its adds (client-go's
// queue counts one it did not merge), for every Get how long the item had
// waited (latency: client-go's since the key became dirty,
// controller-runtime's priority queue's since it became ready, merges not
// counting), for every Done how long since its Get (work), and its retries
// (client-go's delaying queue counts every AddAfter made before the
// shutdown, whatever its delay). These are the oracle for a traced queue's
// verdicts: an add is merged exactly when client-go counted no add, a
// queued span lasts exactly the latency, a process span exactly the work.
// The zero value is ready; give one to one queue.
//
// Ours: a test helper.
type QueueMetrics struct {
	mu            sync.Mutex
	adds, retries int
	latency, work []time.Duration
}

// metricFunc is a metric of any kind calling f on Inc and Observe (nil:
// one that is kept nowhere).
type metricFunc func(float64)

func (f metricFunc) Inc()        { f.Observe(1) }
func (f metricFunc) Dec()        {}
func (f metricFunc) Set(float64) {}
func (f metricFunc) Observe(v float64) {
	if f != nil {
		f(v)
	}
}

func (m *QueueMetrics) observe(to *[]time.Duration) metricFunc {
	return func(v float64) {
		m.mu.Lock()
		defer m.mu.Unlock()
		*to = append(*to, time.Duration(v*float64(time.Second)))
	}
}

// NewAddsMetric counts the adds.
func (m *QueueMetrics) NewAddsMetric(string) workqueue.CounterMetric {
	return metricFunc(func(float64) { m.mu.Lock(); m.adds++; m.mu.Unlock() })
}

// NewLatencyMetric keeps each latency.
func (m *QueueMetrics) NewLatencyMetric(string) workqueue.HistogramMetric {
	return m.observe(&m.latency)
}

// NewWorkDurationMetric keeps each work duration.
func (m *QueueMetrics) NewWorkDurationMetric(string) workqueue.HistogramMetric {
	return m.observe(&m.work)
}

// NewDepthMetric keeps nothing.
func (m *QueueMetrics) NewDepthMetric(string) workqueue.GaugeMetric { return metricFunc(nil) }

// NewUnfinishedWorkSecondsMetric keeps nothing.
func (m *QueueMetrics) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return metricFunc(nil)
}

// NewLongestRunningProcessorSecondsMetric keeps nothing.
func (m *QueueMetrics) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return metricFunc(nil)
}

// NewRetriesMetric counts the retries.
func (m *QueueMetrics) NewRetriesMetric(string) workqueue.CounterMetric {
	return metricFunc(func(float64) { m.mu.Lock(); m.retries++; m.mu.Unlock() })
}

// Read returns what the queue has reported so far, in its order.
func (m *QueueMetrics) Read() (adds int, latency, work []time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.adds, slices.Clone(m.latency), slices.Clone(m.work)
}

// Retries returns how many retries the queue has reported so far.
func (m *QueueMetrics) Retries() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.retries
}
