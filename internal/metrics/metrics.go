// Package metrics holds this project's metrics: client-go's informer and
// workqueue metrics, with client-go's names, meanings and buckets, and two
// per-handler metrics client-go lacks, as OpenTelemetry instruments.
//
// Every instrument is made from the global MeterProvider
// (otel.GetMeterProvider) when its informer or queue is built. Made before
// any provider is set, it is OTel's delegating instrument, which follows
// the first otel.SetMeterProvider made later; with no provider ever set,
// recording is OTel's no-op. [Enabled] tells a hot path whether recording
// would count, so that it can skip reading the clock when it would not.
//
// Ours: client-go publishes these through its own provider interfaces
// (k8s.io/client-go/util/workqueue/metrics.go MetricsProvider,
// k8s.io/client-go/tools/cache/informer_metrics.go InformerMetricsProvider),
// which k8s.io/component-base fills with Prometheus metrics
// (metrics/prometheus/workqueue/metrics.go,
// metrics/prometheus/clientgo/fifo/metrics.go).
package metrics

import (
	"reflect"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// ScopeName is the instrumentation scope of every instrument here. Ours.
const ScopeName = "github.com/informer-anatomy/informer-anatomy/dropin"

// Metric names. The workqueue's are component-base's workqueue subsystem
// and keys; the informer's its clientgo/fifo subsystem "informer" and
// names. The two handler metrics are ours.
const (
	WorkqueueDepth                   = "workqueue_depth"
	WorkqueueAdds                    = "workqueue_adds_total"
	WorkqueueQueueDuration           = "workqueue_queue_duration_seconds"
	WorkqueueWorkDuration            = "workqueue_work_duration_seconds"
	WorkqueueUnfinishedWork          = "workqueue_unfinished_work_seconds"
	WorkqueueLongestRunningProcessor = "workqueue_longest_running_processor_seconds"
	WorkqueueRetries                 = "workqueue_retries_total"

	InformerQueuedItems          = "informer_queued_items"
	InformerProcessingLatency    = "informer_processing_latency_seconds"
	InformerStoreResourceVersion = "informer_store_resource_version"

	HandlerPendingNotifications = "informer_handler_pending_notifications"
	HandlerProcessingLatency    = "informer_handler_processing_latency_seconds"
)

// Attribute keys: component-base's label names.
const (
	KeyName     = attribute.Key("name")
	KeyGroup    = attribute.Key("group")
	KeyVersion  = attribute.Key("version")
	KeyResource = attribute.Key("resource")
	KeyHandler  = attribute.Key("handler")
)

// WorkqueueBuckets are component-base's buckets of both workqueue
// histograms: ExponentialBuckets(10e-9, 10, 10), 10ns to 10s.
var WorkqueueBuckets = []float64{1e-08, 1e-07, 1e-06, 1e-05, 0.0001, 0.001, 0.01, 0.1, 1, 10}

// InformerBuckets are component-base's buckets of
// informer_processing_latency_seconds (clientgo/fifo/metrics.go); the
// per-handler histogram uses them too (ours: a handler call is one part of
// a process call).
var InformerBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Meter is the meter of the global provider as it is now. Ours.
func Meter() metric.Meter { return otel.GetMeterProvider().Meter(ScopeName) }

// defaultGlobalType is the type of the global MeterProvider before any is
// set (OTel's internal delegating provider), captured at init.
var defaultGlobalType = func() reflect.Type {
	t := reflect.TypeOf(otel.GetMeterProvider())
	if t != nil && t.Kind() == reflect.Pointer && t.Elem().PkgPath() == "go.opentelemetry.io/otel/internal/global" {
		return t
	}
	return nil
}()

// Enabled (ours) reports whether the global MeterProvider records: false while no
// provider is set (the delegate has nothing to delegate to) and for OTel's
// no-op provider. An atomic load and a type comparison; it sees a provider
// set later at once, as the delegating instruments do.
func Enabled() bool {
	switch mp := otel.GetMeterProvider().(type) {
	case noop.MeterProvider, *noop.MeterProvider:
		return false
	default:
		return reflect.TypeOf(mp) != defaultGlobalType
	}
}

// must reports a meter's error to otel.Handle and returns the instrument
// anyway (the SDK returns a working one with its errors); an informer or
// queue must not fail for its metrics. [orNoop] stands in if there is none.
func must[T any](inst T, err error) T {
	if err != nil {
		otel.Handle(err)
	}
	return inst
}

// orNoop is inst, or fallback when a provider returned no instrument.
func orNoop[T any](inst, fallback T) T {
	if any(inst) == nil {
		return fallback
	}
	return inst
}
