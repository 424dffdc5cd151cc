package prometheus

import (
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	k8smetrics "k8s.io/component-base/metrics"

	"github.com/informer-anatomy/informer-anatomy/internal/metrics"
)

// latencyVec is informer_handler_processing_latency_seconds: a histogram
// vector whose series each have one writer, the run goroutine of one
// handler's listener (chapter 5's processorListener), which observes every
// call of its handler.
//
// Why not component-base's HistogramVec alone: its series is Prometheus's
// histogram, made for any number of writers at once, and an observation
// pays four atomic read-modify-writes for it (the hot/cold count, the
// bucket, a compare-and-swap loop for the sum, the count). Each handler
// call pays one observation, and with four handlers that do little those
// observations were a good part of what issue 37's bound on the metrics'
// cost measured (docs/performance.md). A series with one writer needs
// none of that: here it is a small mutex the writer takes once per
// observation (two atomic instructions, uncontended but for the moment a
// scrape copies the series) around plain arithmetic. Atomic stores by the
// writer with a retried read at scrape time were tried and measured
// slower: on amd64 every atomic store of Go is an XCHG, a locked
// instruction as costly as an add, and a consistent read needs three of
// them per observation.
//
// What stays component-base's: latencyVec embeds its HistogramVec, built
// from the same options as before and registered as before
// (legacyregistry.MustRegister), so that its Create decides, as for any
// metric of component-base's, whether the metric is shown (a metric turned
// off by --disabled-metrics, or hidden after deprecation, records nothing:
// newWriter returns a no-op), annotates the help with the stability level
// ("[ALPHA] ..."), and describes the family; and its WithLabelValues
// applies the label allow-lists (--allow-metric-labels) to a new series'
// values. Collect writes each series as that vector's own series would be
// written (a classic histogram of the same buckets, count, sum, labels and
// creation time), so that a scrape cannot tell the two apart
// (TestLatencyVecGathersAsComponentBase). When component-base's native
// histograms are on (its NativeHistograms feature gate, applied before
// the metric is registered), a series also carries native buckets, which
// only Prometheus's histogram keeps: newWriter then returns the embedded
// vector's own series, as before this type. Ours.
type latencyVec struct {
	*k8smetrics.HistogramVec

	// mu guards writers, and keeps the series newWriter makes and deletes
	// in the embedded vector out of Collect.
	mu      sync.Mutex
	writers map[string][]*latencySeries // by the label values newWriter was given; guarded by mu
}

func newLatencyVec(opts *k8smetrics.HistogramOpts, labels []string) *latencyVec {
	return &latencyVec{HistogramVec: k8smetrics.NewHistogramVec(opts, labels), writers: map[string][]*latencySeries{}}
}

// latencySeries is one writer's series: the bucket counts (the last one
// +Inf's) and the sum, written under mu by its one writer, read under mu
// by Collect, so that a scrape sees whole observations only.
type latencySeries struct {
	bounds  []float64
	labels  []string // after the allow-lists
	created time.Time

	mu     sync.Mutex
	counts []uint64 // guarded by mu
	sum    float64  // guarded by mu
}

// Observe adds v, as Prometheus's histogram does: to the first bucket
// whose upper bound is at least v (the +Inf bucket if none, and for NaN),
// and to the sum.
func (s *latencySeries) Observe(v float64) {
	i := bucketOf(s.bounds, v)
	s.mu.Lock()
	s.counts[i]++
	s.sum += v
	s.mu.Unlock()
}

// bucketOf is the index of the bucket v falls in, len(bounds) for +Inf:
// Prometheus's histogram.findBucket for fewer than 35 bounds (a linear
// search), NaN included (no bound holds it).
func bucketOf(bounds []float64, v float64) int {
	for i, b := range bounds {
		if v <= b {
			return i
		}
	}
	return len(bounds)
}

// newWriter returns a series of lvs for one writer, which alone may call
// its Observe. Each call makes a new series, even for values already in
// use: two writers never share one (Collect adds up the series that end
// with the same labels, as two writers of one shared series would have).
// It returns a no-op when the vector is not created (not registered,
// disabled or hidden), and the vector's own shared series when native
// histograms are on.
func (w *latencyVec) newWriter(lvs ...string) k8smetrics.ObserverMetric {
	if !w.IsCreated() {
		return metrics.Noop{}
	}
	key := strings.Join(lvs, "\xff")
	constrained := append([]string(nil), lvs...)
	// Under mu, which Collect holds while it collects the embedded
	// vector: the series made and deleted here is never gathered (beside
	// a writer's of the same labels, it would make the gather fail).
	w.mu.Lock()
	defer w.mu.Unlock()
	// component-base's own series, made for the allow-lists (which
	// rewrite constrained in place) and to see whether native histograms
	// are on.
	own := w.HistogramVec.WithLabelValues(constrained...)
	if native(own) {
		return own
	}
	w.HistogramVec.HistogramVec.DeleteLabelValues(constrained...)
	s := &latencySeries{
		bounds:  w.Buckets,
		labels:  constrained,
		created: time.Now(),
		counts:  make([]uint64, len(w.Buckets)+1),
	}
	w.writers[key] = append(w.writers[key], s)
	return s
}

// native says whether component-base made a Prometheus histogram with
// native buckets: its Write then sets a schema.
func native(o k8smetrics.ObserverMetric) bool {
	m, ok := o.(prometheus.Metric)
	if !ok {
		return false
	}
	var out dto.Metric
	return m.Write(&out) == nil && out.GetHistogram().Schema != nil
}

// deleteLabelValues deletes the series of lvs (as given to newWriter):
// every writer's, and the vector's own.
func (w *latencyVec) deleteLabelValues(lvs ...string) {
	w.mu.Lock()
	gone := w.writers[strings.Join(lvs, "\xff")]
	delete(w.writers, strings.Join(lvs, "\xff"))
	w.mu.Unlock()
	constrained := lvs
	if len(gone) > 0 {
		constrained = gone[0].labels
	}
	if w.IsCreated() {
		w.HistogramVec.HistogramVec.DeleteLabelValues(constrained...)
	}
}

// Reset deletes every series, as component-base's HistogramVec.Reset
// does (legacyregistry.Reset calls it).
func (w *latencyVec) Reset() {
	w.mu.Lock()
	w.writers = map[string][]*latencySeries{}
	w.mu.Unlock()
	w.HistogramVec.Reset()
}

// Collect writes the vector's own series (native histograms) and then
// every writer's, the writers whose labels ended the same added up into
// one series, created at the first's time. Called by the registry at each
// gather; the registry describes the family with the embedded vector's
// Describe.
func (w *latencyVec) Collect(ch chan<- prometheus.Metric) {
	descs := make(chan *prometheus.Desc, 1)
	w.HistogramVec.Describe(descs)
	desc := <-descs

	w.mu.Lock()
	w.HistogramVec.Collect(ch)
	var all []*latencySeries
	for _, ss := range w.writers {
		all = append(all, ss...)
	}
	w.mu.Unlock()

	type merged struct {
		labels  []string
		created time.Time
		counts  []uint64
		sum     float64
	}
	var order []string
	byLabels := map[string]*merged{}
	for _, s := range all {
		key := strings.Join(s.labels, "\xff")
		m := byLabels[key]
		if m == nil {
			m = &merged{labels: s.labels, created: s.created, counts: make([]uint64, len(s.counts))}
			byLabels[key] = m
			order = append(order, key)
		} else if s.created.Before(m.created) {
			m.created = s.created
		}
		s.mu.Lock()
		for i, c := range s.counts {
			m.counts[i] += c
		}
		m.sum += s.sum
		s.mu.Unlock()
	}
	for _, key := range order {
		m := byLabels[key]
		var count uint64
		buckets := make(map[float64]uint64, len(w.Buckets))
		for i, b := range w.Buckets {
			count += m.counts[i]
			buckets[b] = count // cumulative
		}
		count += m.counts[len(w.Buckets)] // +Inf
		ch <- prometheus.MustNewConstHistogramWithCreatedTimestamp(desc, count, m.sum, buckets, m.created, m.labels...)
	}
}

var _ k8smetrics.Registerable = (*latencyVec)(nil)
