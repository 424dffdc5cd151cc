package deltafifo

import (
	"context"
	"errors"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	kcache "k8s.io/client-go/tools/cache"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
)

const (
	streamBenchObjects = 50_000
	// streamBenchFat is the size of the annotation the transform strips:
	// the part of each object an informer that transforms never keeps.
	streamBenchFat = 1024
)

// stripTransform keeps an object's identity and resourceVersion and drops
// the rest, as a memory-saving transformer does. Idempotent.
func stripTransform(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, ResourceVersion: p.ResourceVersion}}, nil
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkStreamedTransformHeap streams 50,000 pods, each carrying a 1 KiB
// annotation, to a reflector over an atomic RealFIFO (the informer's queue
// in v0.37.2) whose transformer strips the annotation, and measures the
// live heap (after a GC) once every object has arrived but before the
// initial-events-end bookmark: what the reflector's temporary store holds.
// Each object is made as it is sent and nothing else keeps it, so whatever
// is live is the reflector's. held-B/op is that figure; synced-B/op is the
// live heap after the bookmark's Replace, before the queue is popped.
func BenchmarkStreamedTransformHeap(b *testing.B) {
	type side struct {
		name string
		run  func(w watch.Interface) (rv func() string, stop func())
	}
	lwFor := func(w watch.Interface) (list func(context.Context, metav1.ListOptions) (runtime.Object, error), wf func(context.Context, metav1.ListOptions) (watch.Interface, error)) {
		return func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				return nil, errors.New("this source only streams")
			}, func(context.Context, metav1.ListOptions) (watch.Interface, error) {
				return w, nil
			}
	}
	start := func(run func(context.Context)) func() {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { run(ctx) })
		return func() { cancel(); wg.Wait() }
	}
	sides := []side{
		{"ours", func(w watch.Interface) (func() string, func()) {
			list, wf := lwFor(w)
			q := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, Transformer: stripTransform})
			r := reflector.NewReflectorWithOptions(&reflector.ListWatch{ListWithContextFunc: list, WatchFuncWithContext: wf}, &corev1.Pod{}, q, reflector.ReflectorOptions{})
			return r.LastSyncResourceVersion, start(r.RunWithContext)
		}},
		{"client-go", func(w watch.Interface) (func() string, func()) {
			list, wf := lwFor(w)
			q := kcache.NewRealFIFOWithOptions(kcache.RealFIFOOptions{AtomicEvents: true, Transformer: stripTransform})
			r := kcache.NewReflectorWithOptions(&kcache.ListWatch{ListWithContextFunc: list, WatchFuncWithContext: wf}, &corev1.Pod{}, q, kcache.ReflectorOptions{})
			return r.LastSyncResourceVersion, start(r.RunWithContext)
		}},
	}
	for _, s := range sides {
		b.Run(s.name, func(b *testing.B) {
			var held, synced uint64
			for b.Loop() {
				base := liveHeap()
				w := watch.NewFake()
				rv, stop := s.run(w)
				for i := range streamBenchObjects {
					// Unbuffered: returns once the reflector has the pod.
					w.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p" + strconv.Itoa(i),
						ResourceVersion: strconv.Itoa(10 + i), Annotations: map[string]string{"fat": strings.Repeat("x", streamBenchFat)}}})
				}
				held += liveHeap() - base
				end := strconv.Itoa(10 + streamBenchObjects)
				w.Action(watch.Bookmark, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: end,
					Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
				for rv() != end {
					time.Sleep(time.Millisecond)
				}
				synced += liveHeap() - base
				stop()
			}
			b.ReportMetric(float64(held)/float64(b.N), "held-B/op")
			b.ReportMetric(float64(synced)/float64(b.N), "synced-B/op")
		})
	}
}
