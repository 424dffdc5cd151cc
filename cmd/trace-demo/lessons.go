package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
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
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/app/terminal"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// The two lessons that compare queues run on informers of their own, in a
// namespace of their own (lessonNamespace), so that they show the same thing
// whatever --queue the main informer runs on: coalesce teaches the
// DeltaFIFO, so it always runs on one; order runs the same writes on both.

const (
	lessonNamespace = "lessons"
	// orderLabel marks the order lesson's pods; its RealFIFO informer
	// selects them only, so it does not also trace the filler pods.
	orderLabel = "demo.informer-anatomy.io/order"
)

// orderPods are the order lesson's pods, listed before its writes. Their
// names sort after the filler pods, so on the DeltaFIFO their listed deltas
// wait behind every filler: the watch events for them arrive while they are
// still queued.
var orderPods = []string{"order-a", "order-b", "order-c"}

// orderWrite is one write of the order lesson, in the order it is sent.
type orderWrite struct {
	name   string
	delete bool
}

var orderWrites = []orderWrite{
	{name: "order-a"}, {name: "order-b"}, {name: "order-a"}, {name: "order-b", delete: true}, {name: "order-c"}, {name: "order-a"},
}

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
	*seen
	mu    sync.Mutex
	calls []call // guarded by mu
}

func newRecordingHandler() *recordingHandler { return &recordingHandler{seen: newSeen()} }

func (h *recordingHandler) record(op string, obj any) {
	key, rv := keyAndRV(obj)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, call{op, key, rv})
}

func (h *recordingHandler) OnAdd(obj any, _ bool) { h.record("OnAdd", obj); h.add(obj) }
func (h *recordingHandler) OnUpdate(old, obj any) { h.record("OnUpdate", obj); h.update(old, obj) }
func (h *recordingHandler) OnDelete(obj any)      { h.record("OnDelete", obj); h.delete(obj) }
func (h *recordingHandler) handlerState() *seen   { return h.seen }

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
// fn's error is kept in *errp for the lesson to report; the request itself
// still succeeds.
func afterInitialState(lw *reflector.ListWatch, errp *error, fn func() error) *reflector.ListWatch {
	list, watchFn := lw.ListWithContextFunc, lw.WatchFuncWithContext
	var once sync.Once
	run := func() { once.Do(func() { *errp = fn() }) }
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
// the initial-events-end bookmark.
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
			select {
			case <-w.stop:
				return
			case ev, ok := <-inner.ResultChan():
				if !ok {
					return
				}
				if ev.Type == watch.Bookmark {
					if m, err := meta.Accessor(ev.Object); err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
						atEnd()
					}
				}
				select {
				case w.out <- ev:
				case <-w.stop: // the reflector stops reading after Stop
					return
				}
			}
		}
	}()
	return w
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

func (e *embedded) startLessonInformer(name string, q processor.QueueKind, selector string, hook func() error, hookErr *error) (*lessonInformer, error) {
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
func (l *lessonInformer) caughtUp(e *embedded, what string) error {
	return e.until(what, func() bool {
		want, err := e.serverStateIn(l.ns, l.sel)
		return err == nil && maps.Equal(l.handler.state(), want)
	})
}

// deleteIfThere deletes an object a lesson creates, if an earlier run of
// it left one.
func (e *embedded) deleteIfThere(res apiserver.Resource, ns, name string) error {
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
// batches ahead of the lesson's pods leave the watch tens of milliseconds,
// even under the race detector; the lessons say so when they lose.
func (e *embedded) ensureFillers() error {
	if e.fillersMade {
		return nil
	}
	for i := range fillerPods {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: lessonNamespace, Name: fmt.Sprintf("batch-%03d", i), Labels: map[string]string{fillerLabel: "true"}}}
		if _, err := e.srv.Create(p); err != nil {
			return err
		}
	}
	e.fillersMade = true
	return nil
}

// coalesceLesson: demo's web-coalesced changes twice as a DeltaFIFO
// informer's initial state completes (at its stream's bookmark), behind
// the filler pods; the watch's two MODIFIED deltas join the Replaced delta
// of the initial state still queued for the key.
func (e *embedded) coalesceLesson() (string, error) {
	if err := e.ensureFillers(); err != nil {
		return "", err
	}
	key := lessonNamespace + "/web-coalesced"
	started := time.Now()
	// The lesson's informer is its own and lists afresh: a pod left by an
	// earlier run of the lesson (the live view's script runs it again) is
	// simply made anew.
	if err := e.deleteIfThere(apiserver.Pods, lessonNamespace, "web-coalesced"); err != nil {
		return "", err
	}
	if _, err := e.srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: lessonNamespace, Name: "web-coalesced"}}); err != nil {
		return "", err
	}
	var hookErr error
	l, err := e.startLessonInformer("pods-coalesce", processor.DeltaFIFOQueue, "", func() error {
		for _, v := range []string{"1", "2"} {
			if err := e.updateIn(lessonNamespace, "web-coalesced", v); err != nil {
				return err
			}
		}
		return nil
	}, &hookErr)
	if err != nil {
		return "", err
	}
	defer l.stop() // stop waits for the informer; a second call is a no-op
	if err := l.caughtUp(e, "the coalesce lesson's informer to see every change"); err != nil {
		return "", err
	}
	if hookErr != nil {
		return "", hookErr
	}
	e.show = append(e.show, terminal.Show("changed as the initial state arrived: deltas coalesced in a DeltaFIFO", key, terminal.RootIs("ListAndWatch watch", "MODIFIED")))
	l.stop()
	n := maxPoppedTogether(e.tel.Collector, key, started)
	if n == 0 && e.filter != nil {
		return "coalesce: " + key + " is not among the traced objects, so the spans cannot tell how many of its deltas were popped together", nil
	}
	if n < 2 {
		return "this run lost the coalesce race: the DeltaFIFO reached " + key + " before the watch delivered its changes (run it again)", nil
	}
	return fmt.Sprintf("coalesce (on a DeltaFIFO informer, whatever --queue says): %d deltas of %s were popped together", n, key), nil
}

// orderResult is the order lesson's three columns: what the API server
// did (the initial state, then each write's event, in resourceVersion order) and
// what the handler of each queue's informer was called with.
type orderResult struct {
	server, realFIFO, deltaFIFO []call
}

// orderLesson fetches the order pods with two informers, one per queue;
// once both initial states are in (and before either informer queues its
// own), it sends orderWrites; both watches then deliver the same events. Every
// column is read back from what really happened: the server's write
// responses and each handler's recorded calls.
func (e *embedded) orderLesson() (*orderResult, error) {
	if err := e.ensureFillers(); err != nil {
		return nil, err
	}
	res := &orderResult{}
	keys := map[string]bool{}
	for _, n := range orderPods {
		// Left by an earlier run of the lesson: its informers list afresh.
		if err := e.deleteIfThere(apiserver.Pods, lessonNamespace, n); err != nil {
			return nil, err
		}
	}
	for _, n := range orderPods {
		p, err := e.srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: lessonNamespace, Name: n, Labels: map[string]string{orderLabel: "true"}}})
		if err != nil {
			return nil, err
		}
		m, _ := meta.Accessor(p)
		res.server = append(res.server, call{"LISTED", lessonNamespace + "/" + n, m.GetResourceVersion()})
		keys[lessonNamespace+"/"+n] = true
	}
	// Both informers' initial states meet here; the second to arrive writes.
	var mu sync.Mutex
	arrived := 0
	written := make(chan struct{})
	var writeErr error
	barrier := func() error {
		mu.Lock()
		arrived++
		last := arrived == 2
		mu.Unlock()
		if last {
			writeErr = e.orderWrites(res)
			close(written)
		}
		select {
		case <-written:
			return writeErr
		case <-e.context().Done():
			return fmt.Errorf("stopped while waiting for the other informer's LIST: %w", e.context().Err())
		case <-time.After(stepTimeout):
			return fmt.Errorf("gave up after %v waiting for the other informer's initial state", stepTimeout)
		}
	}
	var rErr, dErr error
	rf, err := e.startLessonInformer("pods-order-realfifo", processor.RealFIFOQueue, orderLabel+"=true", barrier, &rErr)
	if err != nil {
		return nil, err
	}
	defer rf.stop()
	df, err := e.startLessonInformer("pods-order-deltafifo", processor.DeltaFIFOQueue, "", barrier, &dErr)
	if err != nil {
		return nil, err
	}
	defer df.stop()
	for _, l := range []*lessonInformer{rf, df} {
		if err := l.caughtUp(e, "the order lesson's writes to reach both informers"); err != nil {
			return nil, err
		}
	}
	if err := errors.Join(rErr, dErr); err != nil {
		return nil, err
	}
	rf.stop()
	df.stop()
	res.realFIFO = rf.handler.recorded(keys)
	res.deltaFIFO = df.handler.recorded(keys)
	e.show = append(e.show, terminal.Show("order lesson, DeltaFIFO: the initial state's delta popped with the key's later changes", lessonNamespace+"/order-a",
		func(r *spancheck.Span) bool {
			return terminal.RootIs("ListAndWatch watchlist", "LISTED")(r) && r.Attr(tracing.KeyInformerName) == "pods-order-deltafifo"
		}))
	return res, nil
}

// orderWrites sends orderWrites and records each one's event in res.server.
func (e *embedded) orderWrites(res *orderResult) error {
	v := map[string]int{}
	for _, w := range orderWrites {
		key := lessonNamespace + "/" + w.name
		if w.delete {
			if err := e.srv.Delete(apiserver.Pods, lessonNamespace, w.name); err != nil {
				return err
			}
			res.server = append(res.server, call{"DELETED", key, ""})
			continue
		}
		v[w.name]++
		p, err := e.updateObj(lessonNamespace, w.name, fmt.Sprint(v[w.name]))
		if err != nil {
			return err
		}
		res.server = append(res.server, call{"MODIFIED", key, p.ResourceVersion})
	}
	return nil
}

// handlerOp is the handler call a server event becomes: what each column
// is compared with.
func handlerOp(serverOp string) string {
	switch serverOp {
	case "LISTED":
		return "OnAdd"
	case "DELETED":
		return "OnDelete"
	}
	return "OnUpdate"
}

// asHandlerCalls is the server column as the handler calls it should become
// when every event is handed over in order.
func (r *orderResult) asHandlerCalls() []call {
	out := make([]call, len(r.server))
	for i, c := range r.server {
		out[i] = call{handlerOp(c.op), c.key, c.rv}
	}
	return out
}

// sameCalls compares calls by op and key, and by rv except for a delete
// (the server's DELETED carries the last rv, a handler's OnDelete the
// object's as cached, which is the same; a tombstone has none).
func sameCalls(a, b []call) bool {
	return slices.EqualFunc(a, b, func(x, y call) bool {
		return x.op == y.op && x.key == y.key && (x.op == "OnDelete" || x.rv == y.rv)
	})
}

// groups is a column's runs of calls for one key: on the DeltaFIFO, a key's
// merged deltas are handed over one after another.
func groups(calls []call) [][]call {
	var out [][]call
	for _, c := range calls {
		if n := len(out); n > 0 && out[n-1][0].key == c.key {
			out[n-1] = append(out[n-1], c)
			continue
		}
		out = append(out, []call{c})
	}
	return out
}

// merged reports whether the DeltaFIFO column handed some key's changes
// over together that the server made apart: a run of calls for one key
// longer than any run of that key in the server's order.
func (r *orderResult) merged() bool {
	longest := map[string]int{}
	for _, g := range groups(r.server) {
		longest[g[0].key] = max(longest[g[0].key], len(g))
	}
	for _, g := range groups(r.deltaFIFO) {
		if len(g) > longest[g[0].key] {
			return true
		}
	}
	return false
}

// summary is the lesson's one line for the default output.
func (r *orderResult) summary() string {
	rf := "NOT in the server's order"
	if sameCalls(r.realFIFO, r.asHandlerCalls()) {
		rf = "in the server's order"
	}
	var parts []string
	for _, g := range groups(r.deltaFIFO) {
		parts = append(parts, fmt.Sprintf("%s×%d", g[0].key[len(lessonNamespace)+1:], len(g)))
	}
	df := "merged each key's changes: " + strings.Join(parts, " ")
	if !r.merged() {
		df = "merged nothing this time (the queue popped each key before its next change arrived; run it again)"
	}
	return fmt.Sprintf("order: RealFIFO: %d handler calls %s; DeltaFIFO %s", len(r.realFIFO), rf, df)
}

// table is the lesson's three columns side by side, a DeltaFIFO run of one
// key bracketed.
func (r *orderResult) table() string {
	var b strings.Builder
	const w = 28
	fmt.Fprintf(&b, "   %-*s %-*s %s\n", w, "API server (state, writes)", w, "RealFIFO: handler calls", "DeltaFIFO: handler calls")
	var marks []string
	for _, g := range groups(r.deltaFIFO) {
		for i := range g {
			switch {
			case len(g) == 1:
				marks = append(marks, "")
			case i == 0:
				marks = append(marks, " ┐")
			case i == len(g)-1:
				marks = append(marks, fmt.Sprintf(" ┘ %s: %d calls in a row", g[0].key[len(lessonNamespace)+1:], len(g)))
			default:
				marks = append(marks, " │")
			}
		}
	}
	n := max(len(r.server), len(r.realFIFO), len(r.deltaFIFO))
	at := func(cs []call, i int) string {
		if i < len(cs) {
			return cs[i].String()
		}
		return ""
	}
	for i := range n {
		mark := ""
		if i < len(marks) {
			mark = marks[i]
		}
		fmt.Fprintf(&b, "   %-*s %-*s %-*s%s\n", w, at(r.server, i), w, at(r.realFIFO, i), w, at(r.deltaFIFO, i), mark)
	}
	return strings.TrimRight(b.String(), "\n")
}
