// Package informerbench is the workload of the shared-informer benchmarks
// (chapter 5's and package dropin's BenchmarkSharedInformer), in one place
// so that the numbers docs/performance.md compares are measured on the same
// thing: 10,000 listed pods, then 100,000 updates on the watch, every
// handler counting to the last.
package informerbench

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

const (
	// Listed is how many pods the LIST returns.
	Listed = 10_000
	// Updates is how many MODIFIED events the watch then delivers.
	Updates = 100_000
	// Events is what every handler must count to.
	Events = Listed + Updates
)

// LW serves both libraries' ListerWatcher: the LIST, then (to the first
// watch only) every update.
type LW struct {
	Items   *corev1.PodList
	Updates []*corev1.Pod
	watches atomic.Int32
}

// NewLW returns a fresh ListerWatcher over a fixture.
func NewLW(list *corev1.PodList, updates []*corev1.Pod) *LW {
	return &LW{Items: list, Updates: updates}
}

// List returns the listed pods.
func (b *LW) List(metav1.ListOptions) (runtime.Object, error) { return b.Items, nil }

// Watch delivers every update to the first watch; later watches get nothing.
func (b *LW) Watch(metav1.ListOptions) (watch.Interface, error) {
	ch := make(chan watch.Event, 1024)
	if b.watches.Add(1) == 1 {
		go func() {
			for _, p := range b.Updates {
				ch <- watch.Event{Type: watch.Modified, Object: p}
			}
		}()
	}
	return watch.NewProxyWatcher(ch), nil
}

// IsWatchListSemanticsUnSupported makes both reflectors LIST, so the
// benchmark measures the same requests on both.
func (b *LW) IsWatchListSemanticsUnSupported() bool { return true }

// Pass is one iteration of both benchmarks: a fresh LW over list and
// updates, handlers Counters each counting to Events, the informer that
// start builds on them and runs; it returns when every Counter is done and
// the informer, its context cancelled, has stopped (start's wait).
func Pass(list *corev1.PodList, updates []*corev1.Pod, handlers int, start func(lw *LW, hs []*Counter, ctx context.Context) (wait func())) {
	lw := NewLW(list, updates)
	hs := make([]*Counter, handlers)
	for i := range hs {
		hs[i] = NewCounter(Events)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wait := start(lw, hs, ctx)
	for _, h := range hs {
		<-h.Done
	}
	cancel()
	wait()
}

// Fixture builds the listed pods (over 100 namespaces) and the updates
// (each pod in turn, with rising resourceVersions).
func Fixture() (*corev1.PodList, []*corev1.Pod) {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(Listed)}}
	for i := range Listed {
		list.Items = append(list.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns-" + strconv.Itoa(i%100), Name: "p" + strconv.Itoa(i), ResourceVersion: strconv.Itoa(i + 1)}})
	}
	updates := make([]*corev1.Pod, Updates)
	for i := range updates {
		p := list.Items[i%Listed].DeepCopy()
		p.ResourceVersion = strconv.Itoa(Listed + 1 + i)
		updates[i] = p
	}
	return list, updates
}

// Counter is a handler of either library that closes Done when it has
// counted Want calls.
type Counter struct {
	n    atomic.Int64
	Want int64
	Done chan struct{}
	once sync.Once
}

// NewCounter counts to want.
func NewCounter(want int64) *Counter { return &Counter{Want: want, Done: make(chan struct{})} }

func (c *Counter) tick() {
	if c.n.Add(1) == c.Want {
		c.once.Do(func() { close(c.Done) })
	}
}

// OnAdd counts.
func (c *Counter) OnAdd(any, bool) { c.tick() }

// OnUpdate counts.
func (c *Counter) OnUpdate(any, any) { c.tick() }

// OnDelete counts.
func (c *Counter) OnDelete(any) { c.tick() }

// Count is how many calls c has counted.
func (c *Counter) Count() int64 { return c.n.Load() }
