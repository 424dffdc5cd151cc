package deltafifo

import (
	"context"
	"strconv"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kcache "k8s.io/client-go/tools/cache"
)

const (
	benchDeltas = 100_000
	benchKeys   = 10_000
)

// nopExporter drops spans: the benchmark measures producing them, not
// shipping them.
type nopExporter struct{}

func (nopExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (nopExporter) Shutdown(context.Context) error                             { return nil }

// benchFill returns what fills a queue for the queue benchmarks: benchDeltas
// pods over benchKeys keys, an Add of each key, then Updates. The pods are
// made once, here, so that no iteration times their making.
func benchFill() func(q benchQueue) {
	objs := make([]*corev1.Pod, benchDeltas)
	for i := range objs {
		objs[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p" + strconv.Itoa(i%benchKeys), ResourceVersion: strconv.Itoa(i)}}
	}
	return func(q benchQueue) {
		for i, o := range objs {
			if i < benchKeys {
				_ = q.Add(o)
			} else {
				_ = q.Update(o)
			}
		}
	}
}

type benchQueue interface {
	Add(any) error
	Update(any) error
}

// BenchmarkDeltaFIFO enqueues 100k deltas over 10k keys (an Add, then
// Updates) and pops the queue empty, per iteration: ours with no
// TracerProvider (the global no-op), ours with a recording SDK
// (AlwaysSample, batch processor, no-op exporter), and client-go's.
func BenchmarkDeltaFIFO(b *testing.B) {
	fill := benchFill()
	report := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchDeltas, "ns/delta")
	}
	noop := func(any, bool) error { return nil }

	b.Run("ours", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			q := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
			fill(q)
			for range benchKeys {
				_, _ = q.Pop(noop)
			}
		}
		report(b)
	})
	b.Run("ours-traced", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
			sdktrace.WithBatcher(nopExporter{}))
		defer func() { _ = tp.Shutdown(context.Background()) }()
		b.ReportAllocs()
		for b.Loop() {
			q := NewDeltaFIFOWithOptions(DeltaFIFOOptions{Name: "pods", TracerProvider: tp})
			fill(q)
			for range benchKeys {
				_, _ = q.Pop(noop)
			}
		}
		report(b)
	})
	b.Run("client-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			q := kcache.NewDeltaFIFOWithOptions(kcache.DeltaFIFOOptions{})
			fill(q)
			for range benchKeys {
				_, _ = q.Pop(func(any, bool) error { return nil })
			}
		}
		report(b)
	})
}
