package crqueue

import (
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// controllerRuntimeHelp is the help text controller-runtime v0.25 gives
// each workqueue metric it registers on its metrics.Registry
// (pkg/internal/metrics/workqueue.go, registered in that package's init,
// which every controller-runtime controller imports).
var controllerRuntimeHelp = map[string]string{
	"workqueue_depth":                  "Current depth of workqueue by workqueue and priority",
	"workqueue_adds_total":             "Total number of adds handled by workqueue",
	"workqueue_queue_duration_seconds": "How long in seconds an item stays in workqueue before being requested",
	"workqueue_work_duration_seconds":  "How long in seconds processing an item from workqueue takes.",
	"workqueue_unfinished_work_seconds": "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
		"Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
	"workqueue_longest_running_processor_seconds": "How many seconds has the longest running processor for workqueue been running.",
	"workqueue_retries_total":                     "Total number of items added to the workqueue with a non-zero delay (rate-limited requeues, explicit RequeueAfter or AddAfter calls)",
}

// MetricViews are OpenTelemetry views that give the seven workqueue_*
// metrics of dropin's and this package's queues controller-runtime's help
// texts. Give them to the MeterProvider whose Prometheus exporter is
// registered on controller-runtime's metrics.Registry:
//
//	exp, _ := otelprom.New(otelprom.WithRegisterer(ctrlmetrics.Registry))
//	mp := sdkmetric.NewMeterProvider(append([]sdkmetric.Option{sdkmetric.WithReader(exp)}, crqueue.MetricViews()...)...)
//
// Why: any controller of the process left on controller-runtime's default
// queue reports the same seven names on that registry (labelled name and
// controller), and a Prometheus registry merges series of one name only
// when their help texts agree: otherwise Gather fails for the whole
// registry, and the metrics server answers /metrics with an error. Ours
// (component-base's texts) differ from controller-runtime's in four of the
// seven. The label sets may differ (ours have no controller label); the
// registry accepts that. Only the help text changes: the numbers keep
// client-go's meanings and buckets (controller-runtime's own histograms
// have two buckets more, up to 1000s, and its retries count only adds
// with a delay, as its help text says; a client-go queue counts every
// AddAfter).
//
// Ours: controller-runtime has no such views.
func MetricViews() []sdkmetric.Option {
	opts := make([]sdkmetric.Option, 0, len(controllerRuntimeHelp))
	for name, help := range controllerRuntimeHelp {
		opts = append(opts, sdkmetric.WithView(sdkmetric.NewView(
			sdkmetric.Instrument{Name: name},
			sdkmetric.Stream{Description: help},
		)))
	}
	return opts
}
