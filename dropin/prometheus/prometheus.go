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
	"sync"

	"k8s.io/client-go/tools/cache"
	k8smetrics "k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/metrics"
)

var (
	labels = []string{"name", "group", "version", "resource", "handler"}

	pending = k8smetrics.NewGaugeVec(&k8smetrics.GaugeOpts{
		Subsystem:      "informer",
		Name:           "handler_pending_notifications",
		Help:           metrics.HelpHandlerPendingNotifications,
		StabilityLevel: k8smetrics.ALPHA,
	}, labels)
	latency = k8smetrics.NewHistogramVec(&k8smetrics.HistogramOpts{
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
		legacyregistry.MustRegister(pending)
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

// NewPendingNotificationsMetric: informer_handler_pending_notifications.
func (provider) NewPendingNotificationsMetric(id dropin.HandlerMetricsID) cache.GaugeMetric {
	Register()
	return pending.WithLabelValues(values(id)...)
}

// NewHandlerProcessingLatencyMetric:
// informer_handler_processing_latency_seconds.
func (provider) NewHandlerProcessingLatencyMetric(id dropin.HandlerMetricsID) cache.HistogramMetric {
	Register()
	return latency.WithLabelValues(values(id)...)
}

// DeleteHandlerMetrics deletes id's two series.
func (provider) DeleteHandlerMetrics(id dropin.HandlerMetricsID) {
	pending.DeleteLabelValues(values(id)...)
	latency.Delete(map[string]string{"name": id.Name, "group": id.Group, "version": id.Version, "resource": id.Resource, "handler": id.Handler})
}
