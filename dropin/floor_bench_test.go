package dropin_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/informer-anatomy/informer-anatomy/internal/cputime"
	"github.com/informer-anatomy/informer-anatomy/internal/informerbench"
	"github.com/informer-anatomy/informer-anatomy/internal/metrics"
)

// BenchmarkCostFloor asks whether issue 25's cost targets (metrics on ≤
// 1.05×, a 1% sampler ≤ 1.10×) can be met at all on BenchmarkMetrics' and
// BenchmarkTracingSampled's workload, whatever the informer does. It
// measures, in one run, the CPU time one event costs dropin's informer
// with everything off, and the CPU time of the SDK calls that the
// OpenTelemetry API leaves no way around:
//
//   - metrics: one synchronous histogram record per handler call
//     (informer_handler_processing_latency_seconds, attributes name and
//     handler, as internal/metrics records it). OpenTelemetry has no
//     asynchronous histogram and no bulk record, so n handlers are n
//     records an event; the per-pop informer_processing_latency_seconds
//     is left out (a batch is many events), which makes this a lower bound.
//   - sampling: the SDK's Start and End of one root it then drops, under
//     ParentBased(TraceIDRatioBased(0.01)): every object's event is a
//     trace of its own, and only the user's sampler may say which to keep.
//
// floor = 1 + (SDK calls an event × CPU a call) ÷ CPU an event. The SDK
// calls are timed in a tight loop on one goroutine, where they are at
// their cheapest (warm caches, no contention with the handlers), so the
// floor is below any ratio the informer could reach: a floor over the
// target says the target cannot be met by anything the informer does.
func BenchmarkCostFloor(b *testing.B) {
	list, updates := informerbench.Fixture()
	sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer func() { _ = sdk.Shutdown(context.Background()) }()
	sampled := sdktrace.NewTracerProvider(
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.01))),
		sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	defer func() { _ = sampled.Shutdown(context.Background()) }()

	for _, handlers := range []int{1, 4} {
		b.Run(fmt.Sprintf("handlers=%d", handlers), func(b *testing.B) {
			metricsOff()
			dropinPass(list, updates, handlers, tracenoop.NewTracerProvider()) // warm up
			var event, record, root time.Duration
			for b.Loop() {
				event += cpuPer(informerbench.Events, func() {
					metricsOff()
					dropinPass(list, updates, handlers, tracenoop.NewTracerProvider())
				})
				record += histogramRecordCPU(sdk)
				root += droppedRootCPU(sampled)
			}
			b.ReportMetric(float64(event.Nanoseconds())/float64(b.N), "event-cpu-ns")
			b.ReportMetric(float64(record.Nanoseconds())/float64(b.N), "record-cpu-ns")
			b.ReportMetric(float64(root.Nanoseconds())/float64(b.N), "root-cpu-ns")
			b.ReportMetric(1+float64(handlers)*float64(record)/float64(event), "metrics-floor")
			b.ReportMetric(1+float64(root)/float64(event), "sampled-floor")
		})
	}
}

// cpuPer is the process's CPU time of f divided by n.
func cpuPer(n int, f func()) time.Duration {
	runtime.GC()
	c0 := cputime.Process()
	f()
	return (cputime.Process() - c0) / time.Duration(n)
}

// histogramRecordCPU is the CPU time of one record of a handler's latency
// on sdk, with the attributes internal/metrics' OpenTelemetry provider
// gives it.
func histogramRecordCPU(sdk *sdkmetric.MeterProvider) time.Duration {
	const n = 200_000
	otel.SetMeterProvider(sdk)
	defer metricsOff()
	h := metrics.OTelHandlerProvider{}.NewHandlerProcessingLatencyMetric(metrics.HandlerID{Name: "floor", Version: "v1", Resource: "pods", Handler: "handler#0"})
	return cpuPer(n, func() {
		for i := range n {
			h.Observe(time.Duration(i % 1000).Seconds())
		}
	})
}

// droppedRootCPU is the CPU time of the SDK's Start and End of one
// object's root that tp's sampler drops (nearly all at 1%), started as
// chapter 4 starts it.
func droppedRootCPU(tp trace.TracerProvider) time.Duration {
	const n = 200_000
	tracer := tp.Tracer("floor")
	kind := trace.WithSpanKind(trace.SpanKindProducer)
	ctx := context.Background()
	return cpuPer(n, func() {
		for range n {
			_, span := tracer.Start(ctx, "ListAndWatch watch", kind)
			span.End()
		}
	})
}
