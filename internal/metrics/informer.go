package metrics

import (
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"k8s.io/client-go/tools/cache"
)

// InformerProvider is client-go's cache.InformerMetricsProvider with
// OpenTelemetry instruments: informer_queued_items,
// informer_processing_latency_seconds and informer_store_resource_version
// with component-base's names, help, buckets and labels (name, group,
// version, resource from the informer's Identifier). Like component-base's,
// each metric records only while its Identifier is reserved
// (InformerNameAndResource.Reserved, checked at every Set and Observe), so a
// released informer name stops reporting.
//
// Mirrors k8s.io/component-base/metrics/prometheus/clientgo/fifo
// (informerMetricsProvider), on OTel instead of Prometheus.
type InformerProvider struct{}

var _ cache.InformerMetricsProvider = InformerProvider{}

func idSet(id cache.InformerNameAndResource) attribute.Set {
	gvr := id.GroupVersionResource()
	return attribute.NewSet(KeyName.String(id.Name()), KeyGroup.String(gvr.Group),
		KeyVersion.String(gvr.Version), KeyResource.String(gvr.Resource))
}

// NewQueuedItemMetric: informer_queued_items.
func (InformerProvider) NewQueuedItemMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	g := orNoop[metric.Float64Gauge](must(Meter().Float64Gauge(InformerQueuedItems,
		metric.WithDescription(HelpInformerQueuedItems))), noop.Float64Gauge{})
	return reservedGauge{id: id, g: gauge{g, []metric.RecordOption{metric.WithAttributeSet(idSet(id))}}}
}

// NewProcessingLatencyMetric: informer_processing_latency_seconds.
func (InformerProvider) NewProcessingLatencyMetric(id cache.InformerNameAndResource) cache.HistogramMetric {
	h := orNoop[metric.Float64Histogram](must(Meter().Float64Histogram(InformerProcessingLatency,
		metric.WithDescription(HelpInformerProcessingLatency),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(InformerBuckets...))), noop.Float64Histogram{})
	return reservedHistogram{id: id, h: histogram{h, []metric.RecordOption{metric.WithAttributeSet(idSet(id))}}}
}

// NewStoreResourceVersionMetric: informer_store_resource_version.
func (InformerProvider) NewStoreResourceVersionMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	g := orNoop[metric.Float64Gauge](must(Meter().Float64Gauge(InformerStoreResourceVersion,
		metric.WithDescription(HelpInformerStoreResourceVersion))), noop.Float64Gauge{})
	return reservedGauge{id: id, g: gauge{g, []metric.RecordOption{metric.WithAttributeSet(idSet(id))}}}
}

// reservedGauge and reservedHistogram record only while id is reserved,
// as component-base's reservedGaugeMetric and reservedHistogramMetric do.
type reservedGauge struct {
	id cache.InformerNameAndResource
	g  gauge
}

func (r reservedGauge) Set(v float64) {
	if r.id.Reserved() {
		r.g.Set(v)
	}
}

type reservedHistogram struct {
	id cache.InformerNameAndResource
	h  histogram
}

func (r reservedHistogram) Observe(v float64) {
	if r.id.Reserved() {
		r.h.Observe(v)
	}
}

// HandlerID names one event handler of one informer: the labels of the
// per-handler metrics. Ours.
type HandlerID struct {
	// Name, Group, Version and Resource name the informer: its Identifier's
	// name and resource when the Identifier is reserved (the labels of its
	// informer_* metrics), else its description (package dropin says
	// which) and the group and version of its object's kind.
	Name, Group, Version, Resource string
	// Handler is the listener's informer.listener: the handler's type or
	// function, "#" and its index on the informer.
	Handler string
}

// HandlerProvider makes the two per-handler metrics, as client-go's
// cache.InformerMetricsProvider makes an informer's: one call per metric
// and handler when the handler is added, the returned metric set or
// observed from then on. DeleteHandlerMetrics is called once the handler
// is removed or its informer has stopped: the handler's series must go, so
// that a process that adds and removes handlers keeps a bounded number of
// series. Ours: client-go has no per-handler metrics.
type HandlerProvider interface {
	// NewPendingNotificationsMetric: informer_handler_pending_notifications,
	// set whenever the number of notifications waiting for the handler
	// changes.
	NewPendingNotificationsMetric(id HandlerID) cache.GaugeMetric
	// NewHandlerProcessingLatencyMetric:
	// informer_handler_processing_latency_seconds, observed after each call
	// of the handler, in seconds.
	NewHandlerProcessingLatencyMetric(id HandlerID) cache.HistogramMetric
	// DeleteHandlerMetrics drops id's series.
	DeleteHandlerMetrics(id HandlerID)
}

// PendingReadProvider is what a [HandlerProvider] may offer besides: a
// pending-notifications gauge that it reads itself, when it is collected,
// from backlog (safe to call from any goroutine). A provider that offers
// it is asked NewPendingNotificationsRead instead of
// NewPendingNotificationsMetric, and the handler's notifications then pay
// nothing for the gauge; DeleteHandlerMetrics drops it as it drops the
// rest. A scrape sees the backlog of that moment, which a gauge set at each
// change holds too. Ours.
type PendingReadProvider interface {
	NewPendingNotificationsRead(id HandlerID, backlog func() int)
}

// NoopHandlerProvider reports nothing: the handler metrics' provider until
// one is set, as client-go's informer and workqueue providers are no-ops
// until one is set. Ours.
type NoopHandlerProvider struct{}

func (NoopHandlerProvider) NewPendingNotificationsMetric(HandlerID) cache.GaugeMetric { return Noop{} }
func (NoopHandlerProvider) NewHandlerProcessingLatencyMetric(HandlerID) cache.HistogramMetric {
	return Noop{}
}
func (NoopHandlerProvider) DeleteHandlerMetrics(HandlerID) {}

// Noop is a metric that records nothing; [IsNoop] recognises it. Ours.
type Noop struct{}

func (Noop) Set(float64)     {}
func (Noop) Observe(float64) {}

// OTelHandlerProvider is [HandlerProvider] on OpenTelemetry instruments of
// the global MeterProvider. An OTel instrument cannot drop one series, so
// DeleteHandlerMetrics records nothing more for it, and the exporter's
// cumulative series of a removed handler stay until the process ends: use
// it where handlers are not added and removed at run time, or use the
// Prometheus provider (dropin/prometheus), which deletes them. Ours.
type OTelHandlerProvider struct{}

var _ HandlerProvider = OTelHandlerProvider{}

func handlerSet(id HandlerID) attribute.Set {
	return attribute.NewSet(KeyName.String(id.Name), KeyGroup.String(id.Group), KeyVersion.String(id.Version),
		KeyResource.String(id.Resource), KeyHandler.String(id.Handler))
}

// NewPendingNotificationsMetric: informer_handler_pending_notifications.
func (OTelHandlerProvider) NewPendingNotificationsMetric(id HandlerID) cache.GaugeMetric {
	g := orNoop[metric.Float64Gauge](must(Meter().Float64Gauge(HandlerPendingNotifications,
		metric.WithDescription(HelpHandlerPendingNotifications))), noop.Float64Gauge{})
	return gauge{g, []metric.RecordOption{metric.WithAttributeSet(handlerSet(id))}}
}

// NewHandlerProcessingLatencyMetric:
// informer_handler_processing_latency_seconds, on the informer's buckets.
func (OTelHandlerProvider) NewHandlerProcessingLatencyMetric(id HandlerID) cache.HistogramMetric {
	h := orNoop[metric.Float64Histogram](must(Meter().Float64Histogram(HandlerProcessingLatency,
		metric.WithDescription(HelpHandlerProcessingLatency),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(InformerBuckets...))), noop.Float64Histogram{})
	return histogram{h, []metric.RecordOption{metric.WithAttributeSet(handlerSet(id))}}
}

// DeleteHandlerMetrics: see [OTelHandlerProvider].
func (OTelHandlerProvider) DeleteHandlerMetrics(HandlerID) {}

// ParseResourceVersion is the number informer_store_resource_version
// reports for rv: its last 15 digits (so a float64 holds it exactly), 0 for
// "". Mirrors parseRVForMetricsWithTruncation (thread_safe_store.go).
func ParseResourceVersion(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	if len(rv) > 15 {
		rv = rv[len(rv)-15:]
	}
	return strconv.ParseInt(rv, 10, 64)
}
