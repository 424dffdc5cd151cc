package dropin_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/informerbench"
)

// The informer workload is chapter 5's (internal/informerbench): here it
// compares ours behind client-go's interface (dropin) with ours called
// directly, the cost of the adapters.
const (
	benchListed  = informerbench.Listed
	benchUpdates = informerbench.Updates
)

var benchFixture = informerbench.Fixture

type benchLW = informerbench.LW
type countingHandler = informerbench.Counter

// informerRunner builds an informer on lw with handlers hs and runs it.
type informerRunner func(lw *benchLW, hs []*countingHandler, ctx context.Context) (wait func())

func runInformer(inf interface{ RunWithContext(context.Context) }, ctx context.Context) func() {
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	return func() { <-done }
}

// BenchmarkSharedInformer: ours direct (chapter 5), ours behind client-go's
// interface (dropin), and client-go's, untraced; and "dropin-vs-ours",
// which runs the first two alternately in one loop and reports dropin's
// wall and CPU time ÷ ours', the number docs/performance.md keeps.
func BenchmarkSharedInformer(b *testing.B) {
	list, updates := benchFixture()
	const events = benchListed + benchUpdates
	for _, handlers := range []int{1, 4} {
		b.Run(fmt.Sprintf("handlers=%d", handlers), func(b *testing.B) {
			pass := func(start informerRunner) { informerbench.Pass(list, updates, handlers, start) }
			ours := func(lw *benchLW, hs []*countingHandler, ctx context.Context) func() {
				inf := processor.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, nil)
				for _, h := range hs {
					_, _ = inf.AddEventHandler(h)
				}
				return runInformer(inf, ctx)
			}
			viaDropin := func(lw *benchLW, hs []*countingHandler, ctx context.Context) func() {
				inf := dropin.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, nil)
				for _, h := range hs {
					_, _ = inf.AddEventHandler(h)
				}
				return runInformer(inf, ctx)
			}
			clientGo := func(lw *benchLW, hs []*countingHandler, ctx context.Context) func() {
				inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
				for _, h := range hs {
					_, _ = inf.AddEventHandler(h)
				}
				return runInformer(inf, ctx)
			}
			measure := func(b *testing.B, start informerRunner) {
				runtime.GC()
				for b.Loop() {
					pass(start)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*events), "ns/event")
			}
			pass(ours) // warm up, so that the first variant does not pay the cold start alone
			b.Run("ours", func(b *testing.B) { measure(b, ours) })
			b.Run("dropin", func(b *testing.B) { measure(b, viaDropin) })
			b.Run("client-go", func(b *testing.B) { measure(b, clientGo) })
			b.Run("dropin-vs-ours", func(b *testing.B) {
				b.ReportMetric(alternate(b, [2]func(){func() { pass(ours) }, func() { pass(viaDropin) }}), "dropin÷ours")
			})
		})
	}
}

// alternate runs variants[0] and [1] in the order AB BA AB … for b.N
// rounds and returns the wall time of [1] ÷ [0]: each pays the other's
// order effects equally.
func alternate(b *testing.B, variants [2]func()) float64 {
	var wall [2]time.Duration
	i := 0
	for b.Loop() {
		for j := range 2 {
			v := j ^ (i & 1)
			runtime.GC()
			t0 := time.Now()
			variants[v]()
			wall[v] += time.Since(t0)
		}
		i++
	}
	return float64(wall[1]) / float64(wall[0])
}

// BenchmarkWorkqueue: a controller's use of its workqueue, in bursts: 100
// handler calls, each keying its object (cache.MetaNamespaceKeyFunc) and
// adding the key (one in five twice, merged), then a worker takes every key
// and does what every sync handler does before its own logic: split the
// key, read the object from the lister's indexer, Forget, Done. 500 bursts
// over 10,000 objects, on one goroutine so that what is measured is the
// calls and not the scheduler's choices between goroutines.
//
// Variants: client-go's rate-limiting queue; the same behind
// NewTracedQueue with tracing off and nothing reading (no MeterProvider,
// no live view, no Stats: what must cost nothing); and with the SDK
// recording every span. "untraced-vs-client-go" alternates the first two
// and reports the ratio; "counting-vs-client-go" does the same with the
// untraced queue counting for its Stats (Stats called once before the
// pass: the per-key bookkeeping, kept only while something reads). The "bare" workload drops the keying and the
// lister read, leaving only queue calls, and adds "forward-only", a wrapper
// that only forwards: the price of one more interface hop per call, which
// no wrapper can avoid, set against what our checks add on top of it.
func BenchmarkWorkqueue(b *testing.B) {
	const objects, bursts, burst = 10_000, 500, 100
	const adds = bursts * burst * 6 / 5
	controller := benchControllerPass() // metrics_bench_test.go: the same workload
	pods := make([]*corev1.Pod, objects)
	for i := range pods {
		pods[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-" + strconv.Itoa(i%100), Name: "p" + strconv.Itoa(i)}}
	}
	keys := make([]string, objects)
	for i, p := range pods {
		keys[i], _ = cache.MetaNamespaceKeyFunc(p)
	}
	bare := func(q workqueue.TypedRateLimitingInterface[string]) {
		n := 0
		for range bursts {
			for range burst {
				q.Add(keys[(n*7919)%objects])
				if n%5 == 4 {
					q.Add(keys[(n*7919)%objects])
				}
				n++
			}
			for q.Len() > 0 {
				item, _ := q.Get()
				q.Forget(item)
				q.Done(item)
			}
		}
		q.ShutDown()
	}
	plain := func() workqueue.TypedRateLimitingInterface[string] {
		return workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	}
	untraced := func() workqueue.TypedRateLimitingInterface[string] {
		q := dropin.NewTracedQueue("bench", plain())
		q.(*dropin.TracedQueue[string]).SetTracerProvider(noop.NewTracerProvider())
		return q
	}
	counting := func() workqueue.TypedRateLimitingInterface[string] {
		q := untraced()
		q.(*dropin.TracedQueue[string]).Stats()
		return q
	}
	for _, w := range []struct {
		name string
		pass func(workqueue.TypedRateLimitingInterface[string])
	}{{"controller", controller}, {"bare", bare}} {
		b.Run(w.name, func(b *testing.B) {
			measure := func(b *testing.B, mk func() workqueue.TypedRateLimitingInterface[string]) {
				runtime.GC()
				for b.Loop() {
					w.pass(mk())
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*adds), "ns/add")
			}
			w.pass(plain())
			b.Run("client-go", func(b *testing.B) { measure(b, plain) })
			b.Run("traced-untraced", func(b *testing.B) { measure(b, untraced) })
			b.Run("traced", func(b *testing.B) {
				tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(nopExporter{}))
				defer func() { _ = tp.Shutdown(context.Background()) }()
				measure(b, func() workqueue.TypedRateLimitingInterface[string] {
					q := dropin.NewTracedQueue("bench", plain())
					q.(*dropin.TracedQueue[string]).SetTracerProvider(tp)
					return q
				})
			})
			// Wall and CPU (reportOnOff): on a machine shared with other
			// work the CPU ratio is the steadier of the two.
			b.Run("untraced-vs-client-go", func(b *testing.B) {
				reportOnOff(b, [2]func(){func() { w.pass(plain()) }, func() { w.pass(untraced()) }}, "untraced÷client-go")
			})
			b.Run("counting-vs-client-go", func(b *testing.B) {
				reportOnOff(b, [2]func(){func() { w.pass(plain()) }, func() { w.pass(counting()) }}, "counting÷client-go")
			})
			if w.name == "bare" {
				b.Run("forward-only-vs-client-go", func(b *testing.B) {
					b.ReportMetric(alternate(b, [2]func(){func() { w.pass(plain()) }, func() { w.pass(forwardOnly{plain()}) }}), "forward-only÷client-go")
				})
			}
		})
	}
}

// forwardOnly is the least any wrapper does: every call forwarded, nothing
// else.
type forwardOnly struct {
	workqueue.TypedRateLimitingInterface[string]
}

type nopExporter struct{}

func (nopExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (nopExporter) Shutdown(context.Context) error                             { return nil }
