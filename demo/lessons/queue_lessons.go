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
	// orderLabel marks the order lesson's pods; its informers select them
	// only, so that they do not also list the coalesce lesson's pod.
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
// before the reflector receives it; see hookedWatch), or, where the
// informer LISTs instead, when the first LIST has returned its last page.
// Either way the watch that follows (the same stream, or the WATCH from
// the list's resourceVersion) delivers every change fn made, after the
// initial state.
func afterInitialState(lw *reflector.ListWatch, fn func()) *reflector.ListWatch {
	list, watchFn := lw.ListWithContextFunc, lw.WatchFuncWithContext
	var once sync.Once
	run := func() { once.Do(fn) }
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
// the initial-events-end bookmark: the server has sent the whole initial
// state by then, so what atEnd writes comes on the stream after it, as
// watch events, whatever the server's timing. When the reflector reads
// them does not matter: the lesson informer's pop loop is held until they
// are queued (popHold).
type hookedWatch struct {
	inner    watch.Interface
	out      chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
}

func newHookedWatch(inner watch.Interface, atEnd func()) *hookedWatch {
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
			if isInitialEventsEnd(ev) {
				atEnd()
			}
			select {
			case w.out <- ev:
			case <-w.stop: // the reflector stops reading after Stop
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

func (w *hookedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *hookedWatch) Stop() { w.stopOnce.Do(func() { close(w.stop); w.inner.Stop() }) }

// popHold holds a lesson informer's pop loop (its BeforePop, chapter 4's
// Config.BeforePop) from the first pop until the lesson's writes are in
// its queue: until the lesson's hook has written (afterInitialState) and
// the reflector's LastSyncResourceVersion has reached the resourceVersion
// of its last write, which the reflector sets only after it has queued
// that write's event (and every one before it: a watch delivers in
// resourceVersion order). So the initial state's delta of a lesson's key
// and the watch's deltas of it are queued together on every run, and the
// DeltaFIFO pops them together. Nothing on the pop side could do this:
// DeltaFIFO.PopKeys calls process under the queue's lock, so a gate there
// would hold off the reflector's writes too.
//
// It lets go early when the hook wrote nothing or failed (the lesson
// reports the hook's error) and when the informer stops; and holdLimit
// after the hook has written, with an error the lesson reports (err): the
// queue then pops without the writes. The wait for the hook itself is not
// bounded here: the hook bounds its own waits, and without an initial
// state it never runs, which the lesson's caughtUp reports.
type popHold struct {
	// inf is the informer whose reflector it watches; set before the
	// informer runs.
	inf   interface{ LastSyncResourceVersion() string }
	limit time.Duration
	// written is closed once the hook has returned; rv and hookErr are
	// set before.
	written chan struct{}
	rv      string // the hook's last write's resourceVersion; "": none
	hookErr error
	// released and err belong to the pop loop's goroutine; err is read
	// once the informer has stopped.
	released bool
	err      error
}

// holdLimit is how long a popHold waits at most for the reflector to
// queue the lesson's writes, once they are made: their events come in
// milliseconds.
const holdLimit = 5 * time.Second

func newPopHold(limit time.Duration) *popHold {
	return &popHold{limit: limit, written: make(chan struct{})}
}

// write runs the lesson's hook, once, and records what it did.
func (h *popHold) write(hook func() (lastRV string, err error)) func() {
	return func() {
		defer close(h.written)
		h.rv, h.hookErr = hook()
		if h.hookErr != nil {
			h.rv = ""
		}
	}
}

// queued reports whether the reflector has queued the hook's last write
// (call it once written is closed).
func (h *popHold) queued() bool {
	if h.rv == "" {
		return true
	}
	want, err := strconv.ParseUint(h.rv, 10, 64)
	if err != nil {
		return true // not a number: nothing to compare it with; let go
	}
	got, err := strconv.ParseUint(h.inf.LastSyncResourceVersion(), 10, 64)
	return err == nil && got >= want
}

// beforePop is the informer's BeforePop: it holds the first pop, and lets
// every later one through at once.
func (h *popHold) beforePop(ctx context.Context) {
	if h.released {
		return
	}
	h.released = true
	select {
	case <-h.written:
	case <-ctx.Done():
		return
	}
	if demo.Poll(ctx, "the lesson's writes to be queued", h.limit, 0, nil, h.queued) == nil || ctx.Err() != nil {
		return
	}
	h.err = fmt.Errorf("the lesson informer's pop loop waited %v after the lesson's writes, and the last of them (resourceVersion %s) was still not in its queue (its reflector was at %q): it popped without them", h.limit, h.rv, h.inf.LastSyncResourceVersion())
}

// lessonInformer is one informer of a queue lesson: pods in lessonNamespace
// (only selector's, if any) on queue q, with one recordingHandler, traced
// like the main one, its pop loop held until the lesson's writes are
// queued (popHold). stop ends it and waits until it has returned.
type lessonInformer struct {
	inf     processor.SharedIndexInformer
	handler *recordingHandler
	hold    *popHold
	stop    func()
	ns      string
	sel     string
}

// startLessonInformer starts a lesson informer; hook writes the lesson's
// changes once the informer's initial state is complete
// (afterInitialState) and returns the resourceVersion of its last write.
func (e *Env) startLessonInformer(name string, q processor.QueueKind, selector string, hook func() (lastRV string, err error)) (*lessonInformer, error) {
	rc, err := e.client.RESTClient(corev1.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	hold := newPopHold(holdLimit)
	lw := reflector.NewFilteredListWatchFromClient(rc, "pods", lessonNamespace, func(o *metav1.ListOptions) { o.LabelSelector = selector })
	inf := processor.NewSharedIndexInformerWithOptions(afterInitialState(lw, hold.write(hook)), &corev1.Pod{}, processor.SharedIndexInformerOptions{
		Indexers:       store.Indexers{store.NamespaceIndex: store.MetaNamespaceIndexFunc},
		Name:           name,
		TracerProvider: e.tp,
		TraceFilter:    e.filter,
		Queue:          q,
		// The run's pacing, as the main informer's.
		ReflectorBackoff: e.backoff,
		BeforePop:        hold.beforePop,
	})
	hold.inf = inf
	h := newRecordingHandler()
	if _, err := inf.AddEventHandler(h); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { inf.RunWithContext(ctx) })
	return &lessonInformer{inf: inf, handler: h, hold: hold, stop: func() { cancel(); wg.Wait() }, ns: lessonNamespace, sel: selector}, nil
}

// err is why the lesson's run of this informer went wrong: its hook's
// error, or a hold that ran out. Call it once the informer has stopped,
// or after caughtUp.
func (l *lessonInformer) err() error {
	select {
	case <-l.hold.written:
		if l.hold.hookErr != nil {
			return l.hold.hookErr
		}
	default:
	}
	return l.hold.err
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
