package dropin_test

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/cputime"
	"github.com/informer-anatomy/informer-anatomy/internal/informerbench"
)

// metricsOff sets the global MeterProvider to OpenTelemetry's no-op, for
// BenchmarkCostFloor's passes with nothing on. (The Prometheus providers'
// cost is dropin/prometheus's BenchmarkMetrics.)
func metricsOff() { otel.SetMeterProvider(noop.NewMeterProvider()) }

// dropinPass runs one dropin informer with n counting handlers and
// tracer provider tp through BenchmarkSharedInformer's workload, to the
// last event at every handler: BenchmarkCostFloor's and
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
