package reflector

import (
	"context"
	"strconv"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
)

const benchStreamed = 10_000

// streamLW answers a streaming WATCH with benchStreamed ADDED pods and the
// initial-events-end bookmark, all already in the channel: the benchmark
// measures the reflector, not a server. It serves both libraries.
type streamLW struct{ events []watch.Event }

func newStreamLW() *streamLW {
	lw := &streamLW{}
	for i := range benchStreamed {
		lw.events = append(lw.events, watch.Event{Type: watch.Added, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "p" + strconv.Itoa(i), ResourceVersion: strconv.Itoa(i + 1)}}})
	}
	lw.events = append(lw.events, watch.Event{Type: watch.Bookmark, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		ResourceVersion: strconv.Itoa(benchStreamed + 1), Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}})
	return lw
}

func (lw *streamLW) List(metav1.ListOptions) (runtime.Object, error) {
	panic("the benchmark streams; no LIST expected")
}

func (lw *streamLW) Watch(metav1.ListOptions) (watch.Interface, error) {
	w := watch.NewFakeWithChanSize(len(lw.events), false)
	for _, ev := range lw.events {
		w.Action(ev.Type, ev.Object)
	}
	return w, nil
}

func (lw *streamLW) ListWithContext(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
	return lw.List(o)
}

func (lw *streamLW) WatchWithContext(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return lw.Watch(o)
}

// replaced is a store that closes done at its first Replace.
type replaced struct {
	store.Store
	once sync.Once
	done chan struct{}
}

func (s *replaced) Replace(list []any, rv string) error {
	err := s.Store.Replace(list, rv)
	s.once.Do(func() { close(s.done) })
	return err
}

type kReplaced struct {
	kcache.Store
	once sync.Once
	done chan struct{}
}

func (s *kReplaced) Replace(list []any, rv string) error {
	err := s.Store.Replace(list, rv)
	s.once.Do(func() { close(s.done) })
	return err
}

// BenchmarkWatchListSync streams 10k pods into a fresh reflector and store
// per iteration, from the request to the Replace at the bookmark: ours
// untraced (the global no-op provider), ours traced (recording every span:
// the arrival times and the Reflector.watchlist span), and client-go's,
// with its WatchListClient gate at the default (on). ns/object is the cost
// of one streamed object.
func BenchmarkWatchListSync(b *testing.B) {
	lw := newStreamLW()
	run := func(b *testing.B, sync func() (done <-chan struct{}, runFn func(context.Context))) {
		b.ReportAllocs()
		for b.Loop() {
			done, runFn := sync()
			ctx, cancel := context.WithCancel(context.Background())
			finished := make(chan struct{})
			go func() { defer close(finished); runFn(ctx) }()
			<-done
			cancel()
			<-finished
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchStreamed, "ns/object")
	}
	b.Run("ours", func(b *testing.B) {
		run(b, func() (<-chan struct{}, func(context.Context)) {
			s := &replaced{Store: store.NewStore(store.MetaNamespaceKeyFunc), done: make(chan struct{})}
			r := NewReflectorWithOptions(lw, &corev1.Pod{}, s, ReflectorOptions{})
			return s.done, func(ctx context.Context) { _ = r.ListAndWatchWithContext(ctx) }
		})
	})
	b.Run("ours-traced", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
			sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
		run(b, func() (<-chan struct{}, func(context.Context)) {
			s := &replaced{Store: store.NewStore(store.MetaNamespaceKeyFunc), done: make(chan struct{})}
			r := NewReflectorWithOptions(lw, &corev1.Pod{}, s, ReflectorOptions{TracerProvider: tp})
			return s.done, func(ctx context.Context) { _ = r.ListAndWatchWithContext(ctx) }
		})
	})
	b.Run("client-go", func(b *testing.B) {
		run(b, func() (<-chan struct{}, func(context.Context)) {
			s := &kReplaced{Store: kcache.NewStore(kcache.MetaNamespaceKeyFunc), done: make(chan struct{})}
			r := kcache.NewReflectorWithOptions(lw, &corev1.Pod{}, s, kcache.ReflectorOptions{})
			return s.done, func(ctx context.Context) { _ = r.ListAndWatchWithContext(ctx) }
		})
	})
}
