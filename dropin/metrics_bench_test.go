package dropin_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/cputime"
	"github.com/informer-anatomy/informer-anatomy/internal/informerbench"
)

// metricsOn sets the global MeterProvider to an SDK one with a ManualReader
// (every instrument records; nothing is exported), metricsOff to OTel's
// no-op. The instruments are made when an informer or queue is built, so
// each pass builds its own after choosing. "Off" is the no-op provider
// rather than none set, because the global cannot be unset once set; both
// make metrics.Enabled false and every record a no-op call.
func metricsOn(sdk *sdkmetric.MeterProvider) func() { return func() { otel.SetMeterProvider(sdk) } }
func metricsOff()                                   { otel.SetMeterProvider(noop.NewMeterProvider()) }

// BenchmarkMetrics: the cost of metrics with tracing off, on the workloads
// of BenchmarkSharedInformer (dropin's informer, 110,000 events) and
// BenchmarkWorkqueue ("controller"). "on-vs-off" alternates a pass with
// metrics on and one with them off and reports on ÷ off, the number
// docs/performance.md keeps. For the queue, "off" is the traced queue
// with OTel's no-op provider (no bookkeeping, as nothing reads); "on" is
// the same queue with the SDK recording, the wrapper reporting the metrics
// from its own bookkeeping (a lock, a map entry and a clock read per add,
// get and done). "inner-provider-on-vs-off" is the other way to the same
// numbers: the inner queue given WorkqueueMetricsProvider (client-go's own
// bookkeeping; the wrapper then reports none); "provider-no-meter" is
// that bookkeeping with OTel's no-op provider. Each way has its own queue
// name: a name given WorkqueueMetricsProvider is that provider's for the
// rest of the process.
func BenchmarkMetrics(b *testing.B) {
	sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer func() { _ = sdk.Shutdown(context.Background()) }()
	on := metricsOn(sdk)

	list, updates := informerbench.Fixture()
	for _, handlers := range []int{1, 4} {
		b.Run(fmt.Sprintf("informer/handlers=%d", handlers), func(b *testing.B) {
			pass := func(set func()) func() {
				return func() {
					set()
					dropinPass(list, updates, handlers, tracenoop.NewTracerProvider())
				}
			}
			pass(metricsOff)() // warm up
			b.Run("on-vs-off", func(b *testing.B) {
				reportOnOff(b, [2]func(){pass(metricsOff), pass(on)}, "on÷off")
			})
		})
	}

	b.Run("workqueue/controller", func(b *testing.B) {
		queue := func(set func(), name string, provider workqueue.MetricsProvider) workqueue.TypedRateLimitingInterface[string] {
			set()
			q := dropin.NewTracedQueue(name, workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
				workqueue.TypedRateLimitingQueueConfig[string]{Name: name, MetricsProvider: provider}))
			q.(*dropin.TracedQueue[string]).SetTracerProvider(tracenoop.NewTracerProvider())
			return q
		}
		pass := benchControllerPass()
		off := func() { pass(queue(metricsOff, "bench-self", nil)) }
		off() // warm up
		b.Run("on-vs-off", func(b *testing.B) {
			reportOnOff(b, [2]func(){off, func() { pass(queue(on, "bench-self", nil)) }}, "on÷off")
		})
		b.Run("inner-provider-on-vs-off", func(b *testing.B) {
			reportOnOff(b, [2]func(){off, func() { pass(queue(on, "bench-inner", dropin.WorkqueueMetricsProvider())) }}, "on÷off")
		})
		b.Run("provider-no-meter-vs-off", func(b *testing.B) {
			reportOnOff(b, [2]func(){off, func() { pass(queue(metricsOff, "bench-inner", dropin.WorkqueueMetricsProvider())) }}, "bookkeeping÷off")
		})
	})
}

// dropinPass runs one dropin informer with n counting handlers and
// tracer provider tp through BenchmarkSharedInformer's workload, to the
// last event at every handler: BenchmarkMetrics' and
// BenchmarkTracingSampled's pass.
func dropinPass(list *corev1.PodList, updates []*corev1.Pod, n int, tp trace.TracerProvider) {
	const events = informerbench.Listed + informerbench.Updates
	lw := informerbench.NewLW(list, updates)
	inf := dropin.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, nil)
	_ = inf.(*dropin.Informer).SetTracerProvider(tp)
	hs := make([]*informerbench.Counter, n)
	for i := range hs {
		hs[i] = informerbench.NewCounter(events)
		_, _ = inf.AddEventHandler(hs[i])
	}
	ctx, cancel := context.WithCancel(context.Background())
	wait := runInformer(inf, ctx)
	for _, h := range hs {
		<-h.Done
	}
	cancel()
	wait()
}

// reportOnOff is [alternate] that also reports the ratio of the process's
// CPU time (internal/cputime), which a core shared with other work does
// not stretch as it stretches the wall clock.
func reportOnOff(b *testing.B, variants [2]func(), unit string) {
	var wall, cpu [2]time.Duration
	i := 0
	for b.Loop() {
		for j := range 2 {
			v := j ^ (i & 1)
			runtime.GC()
			t0, c0 := time.Now(), cputime.Process()
			variants[v]()
			wall[v] += time.Since(t0)
			cpu[v] += cputime.Process() - c0
		}
		i++
	}
	b.ReportMetric(float64(wall[1])/float64(wall[0]), unit)
	if cpu[0] > 0 {
		b.ReportMetric(float64(cpu[1])/float64(cpu[0]), unit+"-cpu")
	}
}

// benchControllerPass is BenchmarkWorkqueue's "controller" workload: 500
// bursts of 100 keyed adds (one in five twice), each burst then drained by
// a worker that splits the key, reads the lister's indexer, Forgets and
// Dones; the queue is shut down at the end.
func benchControllerPass() func(workqueue.TypedRateLimitingInterface[string]) {
	const objects, bursts, burst = 10_000, 500, 100
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	pods := make([]*corev1.Pod, objects)
	for i := range pods {
		pods[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-" + strconv.Itoa(i%100), Name: "p" + strconv.Itoa(i)}}
		_ = indexer.Add(pods[i])
	}
	return func(q workqueue.TypedRateLimitingInterface[string]) {
		n := 0
		for range bursts {
			for range burst {
				p := pods[(n*7919)%objects]
				key, _ := cache.MetaNamespaceKeyFunc(p)
				q.Add(key)
				if n%5 == 4 {
					key, _ = cache.MetaNamespaceKeyFunc(p)
					q.Add(key) // merged
				}
				n++
			}
			for q.Len() > 0 {
				item, _ := q.Get()
				ns, name, _ := cache.SplitMetaNamespaceKey(item)
				_, _, _ = indexer.GetByKey(ns + "/" + name)
				q.Forget(item)
				q.Done(item)
			}
		}
		q.ShutDown()
	}
}
