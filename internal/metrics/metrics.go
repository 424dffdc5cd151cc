// Package metrics holds this project's metrics: the names, buckets and
// labels of client-go's informer and workqueue metrics and of two
// per-handler metrics client-go lacks, the provider interface of those two
// ([HandlerProvider]), and OpenTelemetry implementations of all three
// provider interfaces ([WorkqueueProvider], [InformerProvider],
// [OTelHandlerProvider]) for a program that serves OpenTelemetry metrics
// instead of component-base's Prometheus ones.
//
// client-go reports its metrics through its own provider interfaces
// (k8s.io/client-go/util/workqueue/metrics.go MetricsProvider,
// k8s.io/client-go/tools/cache/informer_metrics.go InformerMetricsProvider),
// which k8s.io/component-base fills with Prometheus metrics
// (metrics/prometheus/workqueue/metrics.go,
// metrics/prometheus/clientgo/fifo/metrics.go). package dropin reports
// through them as client-go does; the OpenTelemetry providers here are one
// more implementation a program may install.
//
// Every OpenTelemetry instrument is made from the global MeterProvider
// (otel.GetMeterProvider) when its provider method is called. Made before
// any provider is set, it is OTel's delegating instrument, which follows
// the first otel.SetMeterProvider made later.
package metrics

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
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

// Attribute keys: component-base's label names, and ours for the handler.
const (
	KeyName     = attribute.Key("name")
	KeyGroup    = attribute.Key("group")
	KeyVersion  = attribute.Key("version")
	KeyResource = attribute.Key("resource")
	KeyHandler  = attribute.Key("handler")
)

// Help texts, component-base's for client-go's metrics and ours for the
// handler pair: every implementation here and in dropin/prometheus uses
// them, so the one name never comes with two help texts.
const (
	HelpInformerQueuedItems          = "Number of items currently queued in the FIFO."
	HelpInformerProcessingLatency    = "Time taken to process events after popping from the queue."
	HelpInformerStoreResourceVersion = "The 15 least significant digits of the resource version of the store."
	HelpHandlerPendingNotifications  = "Number of notifications waiting for an event handler."
	HelpHandlerProcessingLatency     = "Time taken by one call of an event handler (OnAdd, OnUpdate or OnDelete)."
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
