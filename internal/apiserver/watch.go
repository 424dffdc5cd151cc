package apiserver

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// WatchBuffer is how many live events a watcher may fall behind before the
// server ends its watch, as the real server ends a watch that cannot keep up;
// the client re-watches from its last resourceVersion and loses nothing
// (or, past the history kept, gets 410 Expired and lists again).
const WatchBuffer = 4096

type watcher struct {
	res       Resource
	namespace string
	sel       labels.Selector
	fsel      fields.Selector
	bookmarks bool
	timeout   time.Duration

	// pending holds the events owed before any live one: synthetic ADDED
	// events, replayed history, or an ERROR. Only the run goroutine reads it.
	pending []event
	// ch carries live events, offered under Server.mu so their order is the
	// order of writes.
	ch chan event
	// done is closed by the server to end the watch (CloseWatches, or a
	// watcher that fell too far behind).
	done     chan struct{}
	doneOnce sync.Once
}

func (w *watcher) end() { w.doneOnce.Do(func() { close(w.done) }) }

// translate turns a change into what this watcher should see, or ok=false.
// A MODIFIED object that stops matching the selector is sent as DELETED, one
// that starts matching as ADDED: a client keeping a filtered cache would
// otherwise keep an object forever, or never learn of one.
func (w *watcher) translate(ev event) (event, bool) {
	if ev.raw != nil || ev.typ == watch.Error {
		return ev, ev.res.GVR == w.res.GVR
	}
	if ev.res.GVR != w.res.GVR {
		return ev, false
	}
	switch ev.typ {
	case watch.Bookmark:
		return ev, w.bookmarks
	case watch.Added:
		return ev, matches(ev.obj, w.namespace, w.sel, w.fsel)
	case watch.Deleted:
		return ev, matches(ev.prev, w.namespace, w.sel, w.fsel)
	case watch.Modified:
		was, is := matches(ev.prev, w.namespace, w.sel, w.fsel), matches(ev.obj, w.namespace, w.sel, w.fsel)
		switch {
		case was && is:
			return ev, true
		case is:
			ev.typ = watch.Added
			return ev, true
		case was:
			ev.typ = watch.Deleted
			return ev, true
		}
	default:
		// Injected events of any type go to matching watchers as they are.
		return ev, true
	}
	return ev, false
}

func (w *watcher) offer_locked(ev event) {
	ev, ok := w.translate(ev)
	if !ok {
		return
	}
	select {
	case w.ch <- ev:
	default:
		w.end()
	}
}

// Watch serves a WATCH in process; the HTTP handler uses the same logic.
func (s *Server) Watch(ctx context.Context, res Resource, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	if err := s.refuseIfStopped(); err != nil {
		return nil, err
	}
	if err := s.admit(ctx, "watch", res, namespace, "", listQuery(opts), &opts); err != nil {
		return nil, err
	}
	w, err := s.newWatcher(res, namespace, opts)
	if err != nil {
		return nil, err
	}
	dw := &directWatch{out: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(dw.out)
		s.run(ctx, w, dw.stop, func(ev event) bool {
			if ev.raw != nil {
				// Bytes cannot be malformed in process; say so as the client
				// library does for undecodable data.
				ev = errorEvent(ev.res, apierrors.NewInternalError(fmt.Errorf("unable to decode an event from the watch stream: %q", ev.raw)))
			}
			select {
			case dw.out <- watch.Event{Type: ev.typ, Object: ev.obj.DeepCopyObject()}:
				return true
			case <-dw.stop:
				return false
			}
		})
	}()
	return dw, nil
}

type directWatch struct {
	out  chan watch.Event
	stop chan struct{}
	once sync.Once
}

func (d *directWatch) ResultChan() <-chan watch.Event { return d.out }
func (d *directWatch) Stop()                          { d.once.Do(func() { close(d.stop) }) }

func (s *Server) newWatcher(res Resource, namespace string, opts metav1.ListOptions) (*watcher, error) {
	sel, fsel, err := selectors(res, opts)
	if err != nil {
		return nil, err
	}
	sendInitial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	if sendInitial && !opts.AllowWatchBookmarks {
		return nil, apierrors.NewBadRequest("sendInitialEvents requires allowWatchBookmarks=true")
	}
	w := &watcher{
		res: res, namespace: namespace, sel: sel, fsel: fsel,
		bookmarks: opts.AllowWatchBookmarks,
		ch:        make(chan event, WatchBuffer),
		done:      make(chan struct{}),
	}
	if opts.TimeoutSeconds != nil {
		w.timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	rv := opts.ResourceVersion
	switch {
	case sendInitial || rv == "" || rv == "0":
		if rv != "" && rv != "0" {
			if n, err := strconv.ParseInt(rv, 10, 64); err != nil || n > s.rv {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid or future resource version %q", rv))
			}
		}
		if opts.SendInitialEvents == nil || sendInitial {
			// Key order, not resourceVersion order: clients must not assume
			// the synthetic ADDED events arrive sorted by RV (client-go's
			// reflector does not; see its propagateRVFromStart).
			for _, obj := range s.matching_locked(res, namespace, sel, fsel) {
				w.pending = append(w.pending, event{res: res, typ: watch.Added, obj: obj})
			}
		}
		if sendInitial {
			w.pending = append(w.pending, s.bookmark_locked(res, true))
		}
	default:
		n, err := strconv.ParseInt(rv, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q", rv))
		}
		switch {
		case n < s.compactedRV:
			// What the real watch cache sends: the request succeeds and the
			// stream carries one ERROR event with 410 Expired.
			w.pending = []event{errorEvent(res, apierrors.NewResourceExpired(
				fmt.Sprintf("too old resource version: %d (%d)", n, s.compactedRV+1)))}
			return w, nil
		case n > s.rv:
			w.pending = []event{errorEvent(res, tooLargeRV(n, s.rv))}
			return w, nil
		}
		for _, ev := range s.history {
			if ev.rv > n {
				if ev, ok := w.translate(ev); ok {
					w.pending = append(w.pending, ev)
				}
			}
		}
	}
	s.watchers[w] = struct{}{}
	return w, nil
}

func errorEvent(res Resource, err *apierrors.StatusError) event {
	st := err.Status()
	st.Kind, st.APIVersion = "Status", "v1"
	return event{res: res, typ: watch.Error, obj: &st}
}

func (s *Server) bookmark_locked(res Resource, initialEventsEnd bool) event {
	obj := res.newObj()
	m, _ := meta.Accessor(obj)
	m.SetResourceVersion(strconv.FormatInt(s.rv, 10))
	if initialEventsEnd {
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	return event{res: res, typ: watch.Bookmark, obj: obj}
}

// run delivers a watcher's events through emit until the watch ends: by
// timeoutSeconds, by the client (ctx or stop), or by the server (done). A
// pending ERROR ends the watch after it is sent, as on a real server.
func (s *Server) run(ctx context.Context, w *watcher, stop <-chan struct{}, emit func(event) bool) {
	defer func() {
		s.mu.Lock()
		delete(s.watchers, w)
		s.mu.Unlock()
	}()
	for _, ev := range w.pending {
		if !emit(ev) || ev.typ == watch.Error {
			return
		}
	}
	w.pending = nil
	var timeout <-chan time.Time
	if w.timeout > 0 {
		t := time.NewTimer(w.timeout)
		defer t.Stop()
		timeout = t.C
	}
	var tick <-chan time.Time
	if w.bookmarks && s.opts.BookmarkInterval > 0 {
		t := time.NewTicker(s.opts.BookmarkInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case ev := <-w.ch:
			if !emit(ev) {
				return
			}
		case <-tick:
			s.mu.Lock()
			w.offer_locked(s.bookmark_locked(w.res, false))
			s.mu.Unlock()
		case <-w.done:
			return
		case <-timeout:
			return
		case <-ctx.Done():
			return
		case <-stop:
			return
		}
	}
}

// ---- fault injection for tests ----

// CloseWatches ends every open watch normally, as a dropped connection or
// an apiserver rollout would.
func (s *Server) CloseWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watchers {
		w.end()
	}
}

// Compact forgets all watch history and paginated-list snapshots, as etcd
// compaction at the newest revision would: a watch from any older
// resourceVersion now gets 410 Expired. A watch from the newest
// resourceVersion itself is still accepted, since no event after it was
// lost (kube-apiserver accepts a watch from the revision etcd was compacted
// at); a test that wants every open client to relist also ends their
// watches (CloseWatches) after writing something new.
func (s *Server) Compact() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.compactedRV = s.rv
	s.history = nil
	s.snapshots = map[string]*snapshot{}
}

// SendBookmarks sends a BOOKMARK at the current resourceVersion to every
// watch that allows bookmarks.
func (s *Server) SendBookmarks() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watchers {
		w.offer_locked(s.bookmark_locked(w.res, false))
	}
}

// InjectWatchEvent sends an event with any object, of any type, to every
// watch of res: the way to show a client an object of the wrong kind. An
// ERROR event's *metav1.Status without a kind is sent as kube-apiserver
// sends one (kind Status, apiVersion v1), or a client could not decode it
// and would report a broken stream instead of the status.
func (s *Server) InjectWatchEvent(res Resource, typ watch.EventType, obj runtime.Object) {
	if st, ok := obj.(*metav1.Status); ok && st.Kind == "" {
		st = st.DeepCopy()
		st.Kind, st.APIVersion = "Status", "v1"
		obj = st
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ev := event{res: res, typ: typ, obj: obj}
	for w := range s.watchers {
		if w.res.GVR == res.GVR {
			select {
			case w.ch <- ev:
			default:
				w.end()
			}
		}
	}
}

// InjectRawWatchData writes data as it is onto every HTTP watch of res: the
// way to show a client a malformed stream.
func (s *Server) InjectRawWatchData(res Resource, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watchers {
		w.offer_locked(event{res: res, raw: data})
	}
}

// WatchCount is the number of open watches, for tests that wait for a client
// to (re)connect.
func (s *Server) WatchCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watchers)
}
