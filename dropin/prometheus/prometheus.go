// Package prometheus reports dropin's two per-handler metrics,
// informer_handler_pending_notifications and
// informer_handler_processing_latency_seconds, as Prometheus metrics on
// k8s.io/component-base's legacyregistry, the registry client-go's own
// informer and workqueue metrics go to. Importing it is all a program
// does, as for component-base's packages:
//
//	import (
//		_ "k8s.io/component-base/metrics/prometheus/clientgo/fifo" // informer_*
//		_ "k8s.io/component-base/metrics/prometheus/workqueue"     // workqueue_*
//		_ "github.com/informer-anatomy/informer-anatomy/dropin/prometheus" // informer_handler_*
//	)
//
// and legacyregistry's handler (legacyregistry.Handler()) serves all of
// them at /metrics.
//
// Its init sets the process's handler provider
// (dropin.SetHandlerMetricsProvider; the first call wins). The metrics
// follow component-base's conventions: ALPHA stability, the informer's
// buckets (those of component-base's informer_processing_latency_seconds),
// and registration with legacyregistry on first use, when the first
// handler is added, not at import (component-base defers its own so, that
// feature gates are applied first). A removed handler's series are
// deleted, and so are an informer's handlers' when the informer stops.
//
// Ours: mirrors k8s.io/component-base/metrics/prometheus/clientgo/fifo
// (metrics.go), for metrics client-go does not have.
package prometheus

import (
	"math"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/tools/cache"
	k8smetrics "k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/metrics"
)

var (
	labels = []string{"name", "group", "version", "resource", "handler"}

	// pending is read when collected (pendingCollector), not set per
	// notification: see NewPendingNotificationsRead.
	pending = &pendingCollector{
		desc: k8smetrics.NewDesc("informer_handler_pending_notifications", metrics.HelpHandlerPendingNotifications,
			labels, nil, k8smetrics.ALPHA, ""),
		series: map[dropin.HandlerMetricsID]func() float64{},
	}
	// latency is component-base's HistogramVec with a series of one
	// writer per handler: see latencyVec.
	latency = newLatencyVec(&k8smetrics.HistogramOpts{
		Subsystem:      "informer",
		Name:           "handler_processing_latency_seconds",
		Help:           metrics.HelpHandlerProcessingLatency,
		Buckets:        metrics.InformerBuckets,
		StabilityLevel: k8smetrics.ALPHA,
	}, labels)

	registerOnce sync.Once
)

// init installs the provider only; the metrics are registered on first
// use (Register).
func init() {
	dropin.SetHandlerMetricsProvider(Provider())
}

// Register registers the two metrics with legacyregistry and sets the
// provider. It is idempotent, and programs need not call it: importing the
// package and adding a handler is enough.
//
// Ours: mirrors component-base's fifo.Register.
func Register() {
	registerOnce.Do(func() {
		legacyregistry.CustomMustRegister(pending)
		legacyregistry.MustRegister(latency)
	})
	dropin.SetHandlerMetricsProvider(Provider())
}

// Provider returns the Prometheus [dropin.HandlerMetricsProvider], for
// (*dropin.Informer).SetHandlerMetricsProvider or a program that sets the
// process's provider itself. Ours.
func Provider() dropin.HandlerMetricsProvider { return provider{} }

type provider struct{}

func values(id dropin.HandlerMetricsID) []string {
	return []string{id.Name, id.Group, id.Version, id.Resource, id.Handler}
}

// NewPendingNotificationsMetric: informer_handler_pending_notifications,
// as a gauge its caller sets. dropin's informers ask
// NewPendingNotificationsRead instead.
func (provider) NewPendingNotificationsMetric(id dropin.HandlerMetricsID) cache.GaugeMetric {
	Register()
	g := &setGauge{}
	pending.put(id, g.read)
	return g
}

// NewPendingNotificationsRead: informer_handler_pending_notifications,
// read from backlog each time the registry is gathered, so that a
// handler's notifications pay nothing for it (two gauge writes per
// handler and event were about 5% of an event's CPU with four handlers
// that do nothing: docs/performance.md). A scrape sees the backlog of its
// moment, as a gauge set at every change would show it.
func (provider) NewPendingNotificationsRead(id dropin.HandlerMetricsID, backlog func() int) {
	Register()
	pending.put(id, func() float64 { return float64(backlog()) })
}

// NewHandlerProcessingLatencyMetric:
// informer_handler_processing_latency_seconds. The series returned has one
// writer, the handler's listener, which observes every call of the handler
// (latencyVec says why and what stays component-base's); a second call for
// the same id makes a second series, added up with the first when
// gathered.
func (provider) NewHandlerProcessingLatencyMetric(id dropin.HandlerMetricsID) cache.HistogramMetric {
	Register()
	return latency.newWriter(values(id)...)
}

// DeleteHandlerMetrics deletes id's two series.
func (provider) DeleteHandlerMetrics(id dropin.HandlerMetricsID) {
	pending.delete(id)
	latency.deleteLabelValues(values(id)...)
}

// pendingCollector is informer_handler_pending_notifications: one series
// per live handler, each read from its func when the registry is gathered.
// A collector of component-base's (k8smetrics.StableCollector) so that the
// series carries its ALPHA stability as the other metrics do.
type pendingCollector struct {
	k8smetrics.BaseStableCollector
	desc *k8smetrics.Desc

	mu     sync.Mutex
	series map[dropin.HandlerMetricsID]func() float64 // guarded by mu
}

var _ dropin.PendingReadMetricsProvider = provider{}

func (c *pendingCollector) put(id dropin.HandlerMetricsID, read func() float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.series[id] = read
}

func (c *pendingCollector) delete(id dropin.HandlerMetricsID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.series, id)
}

// DescribeWithStability: the one family.
func (c *pendingCollector) DescribeWithStability(ch chan<- *k8smetrics.Desc) { ch <- c.desc }

// CollectWithStability reads every live handler's backlog. The funcs are
// copied out first, so that no handler's read runs under mu.
func (c *pendingCollector) CollectWithStability(ch chan<- k8smetrics.Metric) {
	c.mu.Lock()
	ids := make([]dropin.HandlerMetricsID, 0, len(c.series))
	reads := make([]func() float64, 0, len(c.series))
	for id, read := range c.series {
		ids = append(ids, id)
		reads = append(reads, read)
	}
	c.mu.Unlock()
	for i, id := range ids {
		ch <- k8smetrics.NewLazyConstMetric(c.desc, k8smetrics.GaugeValue, reads[i](), values(id)...)
	}
}

// setGauge is a gauge its caller sets, read by pendingCollector.
type setGauge struct{ bits atomic.Uint64 }

func (g *setGauge) Set(v float64) { g.bits.Store(math.Float64bits(v)) }
func (g *setGauge) read() float64 { return math.Float64frombits(g.bits.Load()) }
