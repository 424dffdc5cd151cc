package metrics

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"k8s.io/client-go/util/workqueue"
)

// WorkqueueProvider is client-go's workqueue.MetricsProvider with
// OpenTelemetry instruments: give it to a client-go queue
// (TypedRateLimitingQueueConfig.MetricsProvider and the like, or
// workqueue.SetProvider) and the queue's own bookkeeping (queue.go,
// metrics.go: an add counts only when the key was not already dirty, the
// queue duration runs from a key's first add to the Get that takes it,
// retries count every AddAfter and AddRateLimited) is reported as
// component-base reports it, with the same seven names, buckets and the
// attribute name. The queue must be named (client-go records nothing for a
// queue without a name).
//
// Mirrors k8s.io/component-base/metrics/prometheus/workqueue
// (prometheusMetricsProvider), on OTel instead of Prometheus.
type WorkqueueProvider struct{}

var _ workqueue.MetricsProvider = WorkqueueProvider{}

func nameSet(name string) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(KeyName.String(name)))
}

func addOpts(name string) []metric.AddOption       { return []metric.AddOption{nameSet(name)} }
func recordOpts(name string) []metric.RecordOption { return []metric.RecordOption{nameSet(name)} }

// NewDepthMetric: workqueue_depth, a gauge (an up-down counter: client-go
// moves it by Inc and Dec).
func (WorkqueueProvider) NewDepthMetric(name string) workqueue.GaugeMetric {
	return newDepth(name)
}

// NewAddsMetric: workqueue_adds_total.
func (WorkqueueProvider) NewAddsMetric(name string) workqueue.CounterMetric {
	return newAdds(name)
}

// NewLatencyMetric: workqueue_queue_duration_seconds.
func (WorkqueueProvider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return newLatency(name)
}

// NewWorkDurationMetric: workqueue_work_duration_seconds.
func (WorkqueueProvider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return newWorkDuration(name)
}

// NewUnfinishedWorkSecondsMetric: workqueue_unfinished_work_seconds, set
// by the queue every 500ms (queue.go, updateUnfinishedWorkLoop).
func (WorkqueueProvider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return newUnfinished(name)
}

// NewLongestRunningProcessorSecondsMetric:
// workqueue_longest_running_processor_seconds, set with the one above.
func (WorkqueueProvider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return newLongest(name)
}

// NewRetriesMetric: workqueue_retries_total.
func (WorkqueueProvider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return newRetries(name)
}

// The provider's instruments, one constructor per metric.

func newDepth(name string) upDown {
	c := orNoop[metric.Int64UpDownCounter](must(Meter().Int64UpDownCounter(WorkqueueDepth, metric.WithDescription("Current depth of workqueue"))),
		noop.Int64UpDownCounter{})
	m := upDown{c, addOpts(name)}
	m.c.Add(context.Background(), 0, m.opts...) // see exists
	return m
}

func newAdds(name string) counter {
	c := orNoop[metric.Int64Counter](must(Meter().Int64Counter(WorkqueueAdds, metric.WithDescription("Total number of adds handled by workqueue"))),
		noop.Int64Counter{})
	m := counter{c, addOpts(name)}
	m.c.Add(context.Background(), 0, m.opts...) // see exists
	return m
}

func newLatency(name string) histogram {
	h := orNoop[metric.Float64Histogram](must(Meter().Float64Histogram(WorkqueueQueueDuration,
		metric.WithDescription("How long in seconds an item stays in workqueue before being requested."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(WorkqueueBuckets...))), noop.Float64Histogram{})
	return histogram{h, recordOpts(name)}
}

func newWorkDuration(name string) histogram {
	h := orNoop[metric.Float64Histogram](must(Meter().Float64Histogram(WorkqueueWorkDuration,
		metric.WithDescription("How long in seconds processing an item from workqueue takes."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(WorkqueueBuckets...))), noop.Float64Histogram{})
	return histogram{h, recordOpts(name)}
}

func newUnfinished(name string) gauge {
	g := orNoop[metric.Float64Gauge](must(Meter().Float64Gauge(WorkqueueUnfinishedWork,
		metric.WithDescription("How many seconds of work has done that is in progress and hasn't been observed by work_duration. "+
			"Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases."),
		metric.WithUnit("s"))), noop.Float64Gauge{})
	m := gauge{g, recordOpts(name)}
	m.Set(0) // see exists
	return m
}

func newLongest(name string) gauge {
	g := orNoop[metric.Float64Gauge](must(Meter().Float64Gauge(WorkqueueLongestRunningProcessor,
		metric.WithDescription("How many seconds has the longest running processor for workqueue been running."),
		metric.WithUnit("s"))), noop.Float64Gauge{})
	m := gauge{g, recordOpts(name)}
	m.Set(0) // see exists
	return m
}

func newRetries(name string) counter {
	c := orNoop[metric.Int64Counter](must(Meter().Int64Counter(WorkqueueRetries, metric.WithDescription("Total number of retries handled by workqueue"))),
		noop.Int64Counter{})
	m := counter{c, addOpts(name)}
	m.c.Add(context.Background(), 0, m.opts...) // see exists
	return m
}

// exists: a Prometheus metric vector's WithLabelValues, which
// component-base's provider calls when the queue is made, shows the series
// at 0 from then on; an OTel instrument has a series only once something
// is recorded. So each counter and gauge records 0 when it is made: a
// queue that never retried shows workqueue_retries_total 0, as upstream.
// (A histogram cannot record "nothing yet": its series appear with the
// first observation.)

// The four shapes of client-go's metric interfaces on OTel instruments.
// client-go calls them under its queue's lock; an OTel record takes no
// lock of the queue's and never calls back, so that is safe.

// Each holds its options as a slice made once: passing opts... on then
// allocates nothing, where a fresh variadic argument to an interface
// method escapes to the heap on every call.

type upDown struct {
	c    metric.Int64UpDownCounter
	opts []metric.AddOption
}

func (m upDown) Inc() { m.c.Add(context.Background(), 1, m.opts...) }
func (m upDown) Dec() { m.c.Add(context.Background(), -1, m.opts...) }

type counter struct {
	c    metric.Int64Counter
	opts []metric.AddOption
}

func (m counter) Inc() { m.c.Add(context.Background(), 1, m.opts...) }

type histogram struct {
	h    metric.Float64Histogram
	opts []metric.RecordOption
}

func (m histogram) Observe(v float64) { m.h.Record(context.Background(), v, m.opts...) }

type gauge struct {
	g    metric.Float64Gauge
	opts []metric.RecordOption
}

func (m gauge) Set(v float64) { m.g.Record(context.Background(), v, m.opts...) }
