// Package metricsetup installs the global MeterProvider the examples'
// metrics go to, read by OpenTelemetry's Prometheus exporter: dropin's
// informers and traced queues (and the queues given
// dropin.WorkqueueMetricsProvider) record on the global provider, so installing one is all a program does to serve
// client-go's informer_* and workqueue_* metrics (and our
// informer_handler_*) at /metrics.
package metricsetup

import (
	"context"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// Install registers an OTel Prometheus exporter with reg and sets the
// global MeterProvider to one that it reads. Give it a fresh
// prometheus.NewRegistry() and serve [Handler] of it, or a registry
// something already serves: controller-runtime's metrics.Registry, which
// the manager's metrics server serves at /metrics (then pass
// crqueue.MetricViews() as opts, so that our workqueue_* series and those
// of controller-runtime's own queues can share the registry). shutdown
// stops the provider.
func Install(reg prometheus.Registerer, opts ...sdkmetric.Option) (shutdown func(context.Context) error, err error) {
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, fmt.Errorf("the Prometheus exporter: %w", err)
	}
	mp := sdkmetric.NewMeterProvider(append([]sdkmetric.Option{sdkmetric.WithReader(exp)}, opts...)...)
	otel.SetMeterProvider(mp)
	return mp.Shutdown, nil
}

// Handler serves g's metrics in Prometheus' text format (mount it at
// /metrics).
func Handler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{})
}
