package lessons

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/demo"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

// The two lessons that compare queues run on informers of their own, in a
// namespace of their own (lessonNamespace), so that they show the same thing
// whatever --queue the main informer runs on: coalesce teaches the
// DeltaFIFO, so it always runs on one; order runs the same writes on both.

const (
	lessonNamespace = "lessons"
	// FillerPods is how many pods the coalesce and order lessons' DeltaFIFO
	// informers list ahead of the lesson's own pods; see ensureFillers.
	FillerPods = 600
	// fillerLabel marks the filler pods.
	fillerLabel = "demo.informer-anatomy.io/filler"
	// orderLabel marks the order lesson's pods; its RealFIFO informer
	// selects them only, so it does not also trace the filler pods.
	orderLabel = "demo.informer-anatomy.io/order"
)

// call is one handler call as a lesson's recordingHandler saw it, or one
// event as the API server made it (op is then LISTED, MODIFIED or DELETED).
type call struct {
	op  string
	key string
	rv  string // "" for the server's DELETED and a DeletedFinalStateUnknown
}

func (c call) String() string {
	name := c.key[strings.IndexByte(c.key, '/')+1:]
	if c.rv == "" {
		return fmt.Sprintf("%-8s %s", c.op, name)
	}
	return fmt.Sprintf("%-8s %s rv=%s", c.op, name, c.rv)
}

// recordingHandler is a lesson informer's one handler: it records every
// call in order, so that a lesson's columns are what a handler really got.
type recordingHandler struct {
	*demo.Seen
	mu    sync.Mutex
	calls []call // guarded by mu
}

func newRecordingHandler() *recordingHandler { return &recordingHandler{Seen: demo.NewSeen()} }

func (h *recordingHandler) record(op string, obj any) {
	key, rv := demo.KeyAndRV(obj)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, call{op, key, rv})
}

func (h *recordingHandler) OnAdd(obj any, _ bool) { h.record("OnAdd", obj); h.Add(obj) }
func (h *recordingHandler) OnUpdate(old, obj any) { h.record("OnUpdate", obj); h.Update(old, obj) }
func (h *recordingHandler) OnDelete(obj any)      { h.record("OnDelete", obj); h.Delete(obj) }

// recorded is the calls so far for keys in keep (all when keep is nil).
func (h *recordingHandler) recorded(keep map[string]bool) []call {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []call
	for _, c := range h.calls {
		if keep == nil || keep[c.key] {
			out = append(out, c)
		}
	}
	return out
}

// afterInitialState wraps lw so that fn runs once, right after the
// informer's initial state is complete and before the reflector hands it to
// the queue: when the stream's initial-events-end bookmark arrives (fn runs
// before the reflector receives it), or, where the informer LISTs instead,
// when the first LIST has returned its last page. Either way the watch
// that follows (the same stream, or the WATCH from the list's
// resourceVersion) delivers every change fn made, after the initial state.
// fn returns the resourceVersion of its last write; on a stream the
// bookmark is held back until that write's event has arrived behind it
// (see hookedWatch). fn's error is kept in *errp for the lesson to report;
// the request itself still succeeds.
func afterInitialState(lw *reflector.ListWatch, errp *error, fn func() (lastRV string, err error)) *reflector.ListWatch {
	list, watchFn := lw.ListWithContextFunc, lw.WatchFuncWithContext
	var once sync.Once
	run := func() (rv string) {
		once.Do(func() {
			rv, *errp = fn()
			if *errp != nil {
				rv = ""
			}
		})
		return rv
	}
	return &reflector.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			w, err := watchFn(ctx, opts)
			if err != nil || opts.SendInitialEvents == nil || !*opts.SendInitialEvents {
				return w, err
			}
			return newHookedWatch(w, run), nil
		},
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			obj, err := list(ctx, opts)
			if err != nil {
				return obj, err
			}
			if m, merr := meta.ListAccessor(obj); merr == nil && m.GetContinue() == "" {
				run()
			}
			return obj, err
		},
	}
}

// hookedWatch relays a stream's events, calling atEnd before it passes on
// the initial-events-end bookmark. atEnd returns the resourceVersion of
// the last write it made ("": none, or it failed); the bookmark is then
// held until that write's event has arrived, and passed on with every
// event up to it right behind. So the reflector reads the lesson's changes
// the moment it has handed the initial state to the queue, with no trip
// through the server and the HTTP stream in between: the queue lessons'
// race against the pop loop (ensureFillers) is then the reflector's next
// read against hundreds of pops. That narrows the race without closing
// it: on a machine starved of CPU the pop loop can still win.
// holdLimit bounds the hold, should the event never come.
type hookedWatch struct {
	inner    watch.Interface
	out      chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
}

// holdLimit is how long a hookedWatch holds the bookmark at most.
const holdLimit = 5 * time.Second

func newHookedWatch(inner watch.Interface, atEnd func() string) *hookedWatch {
	w := &hookedWatch{inner: inner, out: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(w.out)
		for {
			var ev watch.Event
			var ok bool
			select {
			case <-w.stop:
				return
			case ev, ok = <-inner.ResultChan():
				if !ok {
					return
				}
			}
			batch := []watch.Event{ev}
			if isInitialEventsEnd(ev) {
				var open bool
				batch, open = w.holdUntil(batch, atEnd())
				if !open {
					w.send(batch)
					return
				}
			}
			if !w.send(batch) {
				return
			}
		}
	}()
	return w
}

// isInitialEventsEnd reports the bookmark that ends a stream's initial state.
func isInitialEventsEnd(ev watch.Event) bool {
	if ev.Type != watch.Bookmark {
		return false
	}
	m, err := meta.Accessor(ev.Object)
	return err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}

// holdUntil reads inner's events onto held until one at resourceVersion rv
// or later has come (none when rv is ""), the stream ends (open false), an
// error event comes, the watch is stopped, or holdLimit passes.
func (w *hookedWatch) holdUntil(held []watch.Event, rv string) (_ []watch.Event, open bool) {
	want, err := strconv.ParseUint(rv, 10, 64)
	if rv == "" || err != nil {
		return held, true
	}
	limit := time.NewTimer(holdLimit)
	defer limit.Stop()
	for {
		select {
		case <-w.stop:
			return held, true
		case <-limit.C:
			return held, true
		case ev, ok := <-w.inner.ResultChan():
			if !ok {
				return held, false
			}
			held = append(held, ev)
			if ev.Type == watch.Error {
				return held, true
			}
			if m, err := meta.Accessor(ev.Object); err == nil {
				if got, err := strconv.ParseUint(m.GetResourceVersion(), 10, 64); err == nil && got >= want {
					return held, true
				}
			}
		}
	}
}

// send passes evs on in order; false when the watch was stopped.
func (w *hookedWatch) send(evs []watch.Event) bool {
	for _, ev := range evs {
		select {
		case w.out <- ev:
		case <-w.stop: // the reflector stops reading after Stop
			return false
		}
	}
	return true
}

func (w *hookedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *hookedWatch) Stop() { w.stopOnce.Do(func() { close(w.stop); w.inner.Stop() }) }

// lessonInformer is one informer of a queue lesson: pods in lessonNamespace
// (only selector's, if any) on queue q, with one recordingHandler, traced
// like the main one. stop ends it and waits until it has returned.
type lessonInformer struct {
	inf     processor.SharedIndexInformer
	handler *recordingHandler
	stop    func()
	ns      string
	sel     string
}

func (e *Env) startLessonInformer(name string, q processor.QueueKind, selector string, hook func() (lastRV string, err error), hookErr *error) (*lessonInformer, error) {
	rc, err := e.client.RESTClient(corev1.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	lw := reflector.NewFilteredListWatchFromClient(rc, "pods", lessonNamespace, func(o *metav1.ListOptions) { o.LabelSelector = selector })
	inf := processor.NewSharedIndexInformerWithOptions(afterInitialState(lw, hookErr, hook), &corev1.Pod{}, processor.SharedIndexInformerOptions{
		Indexers:       store.Indexers{store.NamespaceIndex: store.MetaNamespaceIndexFunc},
		Name:           name,
		TracerProvider: e.tp,
		TraceFilter:    e.filter,
		Queue:          q,
		// The run's pacing, as the main informer's.
		ReflectorBackoff: e.backoff,
	})
	h := newRecordingHandler()
	if _, err := inf.AddEventHandler(h); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { inf.RunWithContext(ctx) })
	return &lessonInformer{inf: inf, handler: h, stop: func() { cancel(); wg.Wait() }, ns: lessonNamespace, sel: selector}, nil
}

// caughtUp waits until the lesson informer's handler has seen exactly the
// server's pods (of its selector) at their current versions.
func (l *lessonInformer) caughtUp(e *Env, what string) error {
	return e.until(what, func() bool {
		want, err := e.serverStateIn(l.ns, l.sel)
		return err == nil && maps.Equal(l.handler.Versions(), want)
	})
}

// deleteIfThere deletes an object a lesson creates, if an earlier run of
// it left one.
func (e *Env) deleteIfThere(res apiserver.Resource, ns, name string) error {
	if err := e.srv.Delete(res, ns, name); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// ensureFillers creates the filler pods once: the queue of a DeltaFIFO
// lesson informer holds them all at once after its initial state, and a lesson's
// own pods, listed after them, are still queued when the watch delivers
// their changes. It is a race, not a certainty: the DeltaFIFO pops under
// its lock (up to 100 keys per hold in our informer), so nothing can hold
// the pop loop back while the watch enqueues (delta_fifo.go: Pop). Six pop
// batches ahead of the lesson's pods, against a reflector whose next read
// is already waiting (hookedWatch), is a race the reflector nearly always
// wins; the lessons say so when it does not, and ask to be run again.
func (e *Env) ensureFillers() error {
	if e.fillersMade {
		return nil
	}
	for i := range FillerPods {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: lessonNamespace, Name: fmt.Sprintf("batch-%03d", i), Labels: map[string]string{fillerLabel: "true"}}}
		if _, err := e.srv.Create(p); err != nil {
			return err
		}
	}
	e.fillersMade = true
	return nil
}
