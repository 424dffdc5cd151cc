package lessons

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/scalegen"
)

// scale: what an informer holds, and what a relist costs, measured. A few
// thousand realistic pods on the embedded server; client-go's informer and
// ours, each with and without a transform that strips managedFields, one
// at a time: the live heap (after a GC) once synced and at the relist's
// peak, the moment the relist's whole state has arrived and its Replace is
// next, less the heap before the informer started. Opt-in: it takes a few
// seconds and some 100 MiB, and its informers are its own, so the others'
// counts do not change.
func init() {
	register(Lesson{
		Name:  "scale",
		Order: 97,
		OptIn: true,
		Text: func(*Env) string {
			return fmt.Sprintf("%d realistic pods in namespace %q; client-go's informer and ours, each with and without a transform that strips managedFields, synced, then relisted after %d pods changed while the watch was down.", scalePods, scaleNamespace, scaleChanged)
		},
		LookFor: "  Look for: the KiB per pod an informer holds, and how much of it managedFields is; the heap at the\n" +
			"  relist's peak (the whole new state arrived, its Replace next) against the steady heap: client-go's\n" +
			"  reflector holds a second copy of every pod until the Replace, ours hands each unchanged pod back as\n" +
			"  the cached one as it arrives; and the relist's OnUpdate calls whose old and new are one pointer.\n" +
			"  The heap is live heap after a GC; the Go runtime lets the heap grow to about twice that between\n" +
			"  collections (GOGC=100) for both, so a process's memory is about twice these numbers (docs/scale.md).",
		Run: scale,
	})
}

const (
	scaleNamespace = "scale"
	scalePods      = 5000
	// scaleChanged pods change while the watch is down: the relist brings
	// them changed, the rest unchanged.
	scaleChanged = 250
)

// scaleRun is what one informer held.
type scaleRun struct {
	name             string
	steady, peak     int64 // live heap less the heap before it started
	updates, samePtr int64 // the relist's OnUpdate calls, and those with old == new
}

func (r scaleRun) ratio() float64 { return float64(r.peak) / float64(r.steady) }

func scale(e *Env) (Outcome, error) {
	if err := e.scalePodsThere(); err != nil {
		return Outcome{}, err
	}
	pod, stripped, err := e.scalePodBytes()
	if err != nil {
		return Outcome{}, err
	}
	wire, wireMF, err := scalePodJSON()
	if err != nil {
		return Outcome{}, err
	}
	var runs []scaleRun
	variant := 1
	for _, c := range []struct {
		name  string
		ours  bool
		strip bool
	}{
		{"client-go", false, false},
		{"client-go, managedFields stripped", false, true},
		{"ours (" + e.queue.String() + ")", true, false},
		{"ours (" + e.queue.String() + "), managedFields stripped", true, true},
	} {
		variant++
		r, err := e.scaleMeasure(c.name, c.ours, c.strip, variant)
		if err != nil {
			return Outcome{}, fmt.Errorf("%s: %w", c.name, err)
		}
		runs = append(runs, r)
	}
	kib := func(b int64) string { return fmt.Sprintf("%.1f KiB", float64(b)/1024) }
	mib := func(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
	var line strings.Builder
	fmt.Fprintf(&line, "scale: one pod in memory: %s, of which managedFields %s (%d%%); an informer holds %s per pod (the pod, its key, the map's and the namespace index's entries), %s stripped",
		kib(pod), kib(pod-stripped), (pod-stripped)*100/pod, kib(runs[0].steady/scalePods), kib(runs[1].steady/scalePods))
	fmt.Fprintf(&line, "\n· scale: the same pod in JSON, as the API server sends it: %s, of which managedFields %s (%d%%)", kib(wire), kib(wireMF), wireMF*100/wire)
	for _, r := range runs {
		fmt.Fprintf(&line, "\n· scale: %s: steady %s, relist peak %s (%.1fx)", r.name, mib(r.steady), mib(r.peak), r.ratio())
	}
	their, ours := runs[0], runs[2]
	fmt.Fprintf(&line, "\n· scale: the relist's %d OnUpdate calls per handler: old and new one pointer in %d of ours (the unchanged pods), %d of client-go's",
		ours.updates, ours.samePtr, their.samePtr)
	return Outcome{Line: line.String()}, nil
}

// scalePodsThere creates the lesson's pods, unless an earlier run (the
// live view runs lessons again) already did.
func (e *Env) scalePodsThere() error {
	if _, err := e.srv.Get(apiserver.Pods, scaleNamespace, scalePodName(0)); err == nil {
		return nil
	}
	for i := range scalePods {
		if _, err := e.srv.Create(scalegen.TemplatePod(scaleNamespace, scalePodName(i), 1)); err != nil {
			return err
		}
	}
	return nil
}

func scalePodName(i int) string { return fmt.Sprintf("web-%05d", i) }

// scalePodBytes is one pod's size in memory, with and without its
// managedFields: the live heap that a LIST of the lesson's pods (fresh
// copies, as a client decodes them) adds, per pod.
func (e *Env) scalePodBytes() (pod, stripped int64, err error) {
	base := scaleLiveHeap()
	obj, err := e.srv.List(context.Background(), apiserver.Pods, scaleNamespace, metav1.ListOptions{})
	if err != nil {
		return 0, 0, err
	}
	list := obj.(*corev1.PodList)
	full := scaleLiveHeap()
	for i := range list.Items {
		list.Items[i].ManagedFields = nil
	}
	less := scaleLiveHeap()
	runtime.KeepAlive(list)
	n := int64(len(list.Items))
	return (full - base) / n, (less - base) / n, nil
}

// scalePodJSON is the size of one of the lesson's pods in JSON, and of
// its managedFields in it.
func scalePodJSON() (pod, managedFields int64, err error) {
	p := scalegen.TemplatePod(scaleNamespace, scalePodName(0), 1)
	full, err := json.Marshal(p)
	if err != nil {
		return 0, 0, err
	}
	p.ManagedFields = nil
	less, err := json.Marshal(p)
	if err != nil {
		return 0, 0, err
	}
	return int64(len(full)), int64(len(full) - len(less)), nil
}

// scaleLiveHeap is the heap still reachable: HeapAlloc right after a GC.
func scaleLiveHeap() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// scaleMeasure runs one informer on the lesson's pods until synced, then
// changes scaleChanged pods while its watch is down and compacts the
// server's history, so that its rewatch gets 410 Expired and it streams
// the whole state again; it reads the live heap once synced and at the
// stream's closing bookmark (the whole state arrived, the relist's Replace
// next: client-go's informer holds the old cache and a copy of every pod
// then), and counts the relist's OnUpdate calls.
func (e *Env) scaleMeasure(name string, ours, strip bool, variant int) (scaleRun, error) {
	r := scaleRun{name: name}
	lw := &scaleLW{lw: e.srv.ListerWatcher(apiserver.Pods, scaleNamespace)}
	h := &scaleCounter{}
	ctx, cancel := context.WithCancel(context.WithoutCancel(e.context()))
	done := make(chan struct{})
	stop := func() { cancel(); <-done }
	base := scaleLiveHeap()
	var synced func() bool
	if ours {
		inf := processor.NewSharedIndexInformerWithOptions(lw, &corev1.Pod{}, processor.SharedIndexInformerOptions{
			Indexers: store.Indexers{store.NamespaceIndex: store.MetaNamespaceIndexFunc},
			Queue:    e.queue, ReflectorBackoff: e.backoff,
		})
		if strip {
			_ = inf.SetTransform(stripManagedFields)
		}
		_ = inf.SetWatchErrorHandler(watchErrors(e.printer, false))
		if _, err := inf.AddEventHandler(h); err != nil {
			return r, err
		}
		synced = inf.HasSynced
		go func() { defer close(done); inf.RunWithContext(ctx) }()
	} else {
		inf := kcache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, kcache.Indexers{kcache.NamespaceIndex: kcache.MetaNamespaceIndexFunc})
		if strip {
			_ = inf.SetTransform(stripManagedFields)
		}
		_ = inf.SetWatchErrorHandler(func(_ *kcache.Reflector, err error) {})
		if _, err := inf.AddEventHandler(h); err != nil {
			return r, err
		}
		synced = inf.HasSynced
		go func() { defer close(done); inf.RunWithContext(ctx) }()
	}
	defer stop()
	if err := e.until(name+" to sync and hand every pod to its handler", func() bool {
		return synced() && h.adds.Load() == scalePods
	}); err != nil {
		return r, err
	}
	r.steady = scaleLiveHeap() - base
	// One change on the open watch before it is dropped: a watch that ends
	// within a second with no event is a "very short watch", which the
	// reflector reports as an error (and logs) besides the relist.
	if err := e.scaleChange(scalePods-1, variant); err != nil {
		return r, err
	}
	if err := e.until(name+"'s watch to bring a change", func() bool { return h.updates.Load() == 1 }); err != nil {
		return r, err
	}
	h.updates.Store(0)
	h.samePtr.Store(0)

	var peak atomic.Int64
	atEnd := func() { peak.Store(scaleLiveHeap() - base) }
	lw.atEnd.Store(&atEnd)
	release := lw.hold()
	lw.dropWatch()
	for i := range scaleChanged {
		if err := e.scaleChange(i*(scalePods/scaleChanged), variant); err != nil {
			release()
			return r, err
		}
	}
	e.srv.Compact()
	release()
	if err := e.untilRelisted(name+"'s relist to reach its handler", func() bool {
		return peak.Load() != 0 && h.updates.Load() == scalePods
	}); err != nil {
		return r, err
	}
	r.peak = peak.Load()
	r.updates, r.samePtr = h.updates.Load(), h.samePtr.Load()
	return r, nil
}

// scaleChange sets pod i's variant label.
func (e *Env) scaleChange(i, variant int) error {
	obj, err := e.srv.Get(apiserver.Pods, scaleNamespace, scalePodName(i))
	if err != nil {
		return err
	}
	p := obj.(*corev1.Pod)
	p.Labels["variant"] = fmt.Sprint(variant)
	_, err = e.srv.Update(p)
	return err
}

// scaleCounter counts the calls an informer makes, keeping no object:
// adds, updates, and updates whose old and new are the same pointer.
type scaleCounter struct{ adds, updates, samePtr atomic.Int64 }

func (c *scaleCounter) OnAdd(any, bool) { c.adds.Add(1) }
func (c *scaleCounter) OnUpdate(old, new any) {
	c.updates.Add(1)
	if old == new {
		c.samePtr.Add(1)
	}
}
func (c *scaleCounter) OnDelete(any) {}

// scaleLW is the lesson's ListerWatcher: the embedded server's, in process
// (both informers take it), with what the lesson needs to force a relist
// on this informer alone and to read the heap at its peak: its watch can
// be dropped as a broken connection drops it, its next WATCH held while
// the lesson changes pods, and atEnd is called when the stream's last
// bookmark (the end of the initial events) arrives, before the reflector
// gets it.
type scaleLW struct {
	lw    *apiserver.ListerWatcher
	atEnd atomic.Pointer[func()]

	mu   sync.Mutex
	cur  *scaleWatch
	gate chan struct{} // non-nil: WATCH requests wait until it closes
}

func (l *scaleLW) List(opts metav1.ListOptions) (kruntime.Object, error) {
	return l.lw.List(opts)
}

func (l *scaleLW) ListWithContext(ctx context.Context, opts metav1.ListOptions) (kruntime.Object, error) {
	return l.lw.ListWithContext(ctx, opts)
}

func (l *scaleLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

func (l *scaleLW) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	l.mu.Lock()
	gate := l.gate
	l.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	in, err := l.lw.WatchWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	w := &scaleWatch{in: in, out: make(chan watch.Event), stop: make(chan struct{})}
	var atEnd func()
	if f := l.atEnd.Load(); f != nil && opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		atEnd = *f
	}
	go w.forward(atEnd)
	l.mu.Lock()
	l.cur = w
	l.mu.Unlock()
	return w, nil
}

// hold makes WATCH requests wait until release is called.
func (l *scaleLW) hold() (release func()) {
	gate := make(chan struct{})
	l.mu.Lock()
	l.gate = gate
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.gate = nil
			l.mu.Unlock()
			close(gate)
		})
	}
}

// dropWatch ends the open watch as a dropped connection would.
func (l *scaleLW) dropWatch() {
	l.mu.Lock()
	w := l.cur
	l.mu.Unlock()
	if w != nil {
		w.Stop()
	}
}

type scaleWatch struct {
	in   watch.Interface
	out  chan watch.Event
	stop chan struct{}
	once sync.Once
}

func (w *scaleWatch) ResultChan() <-chan watch.Event { return w.out }
func (w *scaleWatch) Stop()                          { w.once.Do(func() { close(w.stop) }) }

// forward passes the server's events on until either side stops; atEnd,
// if set, is called when the initial events' closing bookmark arrives,
// before it is passed on.
func (w *scaleWatch) forward(atEnd func()) {
	defer close(w.out)
	defer w.in.Stop()
	for {
		select {
		case <-w.stop:
			return
		case ev, ok := <-w.in.ResultChan():
			if !ok {
				return
			}
			if atEnd != nil && isInitialEventsEnd(ev) {
				atEnd()
				atEnd = nil
			}
			select {
			case w.out <- ev:
			case <-w.stop:
				return
			}
		}
	}
}
