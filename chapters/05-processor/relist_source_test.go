package processor

// A source for the relist tests (relist_test.go): a cluster of pods kept as
// a few numbers per pod, from which every LIST page and every streamed
// event is generated afresh, as a client decodes a fresh copy of each
// object from the wire. The source itself holds no pod, so a test's heap is
// the informer's. It serves both first-request paths: a paged LIST (when
// listOnly is set it says it cannot stream, as client-go's fakes do) and
// the watch-list stream; and it can fail one LIST page or cut one stream
// short, and hold a request until the test lets it go.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/informer-anatomy/informer-anatomy/internal/scalegen"
)

// podSlot is one pod of a relistSource: what its generated copies are
// made from.
type podSlot struct {
	name    string
	uid     string // "" makes a pod without a UID
	rv      int64
	variant int // changes the generated content
	alive   bool
}

// genPod generates s's pod: internal/scalegen's TemplatePod (labels,
// annotations, an owner, two containers, status and three managedFields
// entries, 10.9 KiB in memory), in namespace "default", with s's
// UID and resourceVersion. Every call allocates a whole new copy, as a
// client decodes one from the wire.
func genPod(s podSlot) *corev1.Pod {
	p := scalegen.TemplatePod("default", s.name, s.variant)
	p.TypeMeta = metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}
	p.UID = types.UID(s.uid)
	p.ResourceVersion = strconv.FormatInt(s.rv, 10)
	p.CreationTimestamp = metav1.Unix(1_700_000_000, 0)
	return p
}

// relistSource is the cluster one informer lists and watches. Mutate it
// (change, remove, create) between relists; expire ends the open watch
// with a 410, which makes the informer relist.
type relistSource struct {
	listOnly bool // says it cannot stream: the reflector pages a LIST
	// pageCap, if > 0, is the most items one page carries, whatever the
	// Limit asked: an API server may send fewer (a page ends where its
	// continue token says), and a small test then still has pages.
	pageCap int

	mu      sync.Mutex
	slots   []podSlot // in name order
	rv      int64
	current *sourceWatch // the open watch, if any
	snaps   map[string][]podSlot
	lists   int      // LIST requests served (first pages)
	asked   []string // every request, as "LIST rv=… limit=… continued" or "WATCH rv=… …"

	// Hooks, called without mu: beforePage before each LIST page is
	// generated (page counts from 1 within one paged LIST, last says it
	// is the LIST's last); beforeBookmark once a stream's objects have all
	// been taken, before its initial-events-end bookmark; onWatch at each
	// WATCH request that does not stream (the one after a relist).
	beforePage     func(page int, last bool)
	beforeBookmark func()
	onWatch        func()
	// midStream, if set, is called after the k-th streamed event; it
	// returns true to cut the stream there (closed before the bookmark),
	// and events to send next (a change made while the stream runs).
	midStream func(k int) (cut bool, next []watch.Event)
	// afterBookmark, if set, is called once a stream's bookmark was taken.
	afterBookmark func()
	// failPage, if > 0, fails that page of the next paged LIST once.
	failPage int
}

func newRelistSource(n int, listOnly bool) *relistSource {
	s := &relistSource{listOnly: listOnly, snaps: map[string][]podSlot{}, rv: 100}
	for i := range n {
		s.rv++
		s.slots = append(s.slots, podSlot{name: fmt.Sprintf("p%06d", i), uid: fmt.Sprintf("uid-%d", i), rv: s.rv, alive: true})
	}
	return s
}

func (s *relistSource) IsWatchListSemanticsUnSupported() bool { return s.listOnly }

// change gives pod i new content at a new resourceVersion, and returns a
// fresh copy of it.
func (s *relistSource) change(i int) *corev1.Pod {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv++
	s.slots[i].rv, s.slots[i].variant = s.rv, s.slots[i].variant+1
	return genPod(s.slots[i])
}

func (s *relistSource) resourceVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strconv.FormatInt(s.rv, 10)
}

func (s *relistSource) remove(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slots[i].alive = false
}

// recreate deletes pod i and creates it again under the same name: a new
// UID (or none, if uid is "").
func (s *relistSource) recreate(i int, uid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv++
	s.slots[i] = podSlot{name: s.slots[i].name, uid: uid, rv: s.rv, variant: s.slots[i].variant + 1, alive: true}
}

func (s *relistSource) create(uid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv++
	s.slots = append(s.slots, podSlot{name: fmt.Sprintf("p%06d", len(s.slots)), uid: uid, rv: s.rv, alive: true})
}

func (s *relistSource) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.slots)
}

// expire ends the open watch with a 410 Expired, as an API server does
// when a watch has fallen behind its history.
func (s *relistSource) expire() {
	s.mu.Lock()
	w := s.current
	s.current = nil
	s.mu.Unlock()
	if w == nil {
		panic("expire: no watch open")
	}
	gone := apierrors.NewResourceExpired("the watch's resourceVersion is too old (test)").ErrStatus
	w.send(watch.Event{Type: watch.Error, Object: &gone})
}

func (s *relistSource) listsServed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists
}

func (s *relistSource) alive() []podSlot {
	var out []podSlot
	for _, p := range s.slots {
		if p.alive {
			out = append(out, p)
		}
	}
	return out
}

func (s *relistSource) List(o metav1.ListOptions) (runtime.Object, error) {
	return s.ListWithContext(context.Background(), o)
}

// requests returns every request made so far: what a reflector asked for.
func (s *relistSource) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.asked)
}

func (s *relistSource) ListWithContext(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	s.asked = append(s.asked, fmt.Sprintf("LIST rv=%q match=%q limit=%d continued=%v", o.ResourceVersion, o.ResourceVersionMatch, o.Limit, o.Continue != ""))
	var snap []podSlot
	start, page := 0, 1
	token := o.Continue
	if token == "" {
		snap = s.alive()
		s.lists++
		token = strconv.Itoa(s.lists) + "/" + strconv.FormatInt(s.rv, 10)
		s.snaps[token] = snap
	} else {
		// token "list/rv:start:page"
		parts := strings.Split(token, ":")
		if len(parts) != 3 {
			s.mu.Unlock()
			return nil, apierrors.NewBadRequest("bad continue token " + token)
		}
		token = parts[0]
		start, _ = strconv.Atoi(parts[1])
		page, _ = strconv.Atoi(parts[2])
		snap = s.snaps[token]
	}
	end := len(snap)
	if o.Limit > 0 {
		limit := int(o.Limit)
		if s.pageCap > 0 {
			limit = min(limit, s.pageCap)
		}
		end = min(end, start+limit)
	}
	last := end == len(snap)
	fail := o.Limit > 0 && s.failPage == page
	if fail {
		s.failPage = 0
	}
	rv := strings.SplitN(token, "/", 2)[1]
	hook := s.beforePage
	s.mu.Unlock()

	if fail {
		return nil, apierrors.NewInternalError(fmt.Errorf("page %d failed (test)", page))
	}
	if hook != nil {
		hook(page, last)
	}
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	for _, p := range snap[start:end] {
		list.Items = append(list.Items, *genPod(p))
	}
	if !last {
		list.Continue = fmt.Sprintf("%s:%d:%d", token, end, page+1)
	}
	return list, nil
}

func (s *relistSource) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return s.WatchWithContext(context.Background(), o)
}

func (s *relistSource) WatchWithContext(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
	w := &sourceWatch{ch: make(chan watch.Event), stopped: make(chan struct{})}
	streaming := o.SendInitialEvents != nil && *o.SendInitialEvents
	if streaming && s.listOnly {
		return nil, errors.New("this source cannot stream")
	}
	s.mu.Lock()
	s.asked = append(s.asked, fmt.Sprintf("WATCH rv=%q match=%q sendInitialEvents=%v bookmarks=%v", o.ResourceVersion, o.ResourceVersionMatch, streaming, o.AllowWatchBookmarks))
	s.current = w
	snap := s.alive()
	onWatch, mid, before, after := s.onWatch, s.midStream, s.beforeBookmark, s.afterBookmark
	s.mu.Unlock()
	if !streaming {
		if onWatch != nil {
			onWatch()
		}
		return w, nil
	}
	go func() {
		for k, p := range snap {
			if !w.send(watch.Event{Type: watch.Added, Object: genPod(p)}) {
				return
			}
			if mid == nil {
				continue
			}
			cut, next := mid(k + 1)
			if cut {
				w.closeEarly()
				return
			}
			for _, ev := range next {
				if !w.send(ev) {
					return
				}
			}
		}
		if before != nil {
			before()
		}
		s.mu.Lock()
		rv := s.rv // at least every event sent
		s.mu.Unlock()
		if !w.send(watch.Event{Type: watch.Bookmark, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			ResourceVersion: strconv.FormatInt(rv, 10),
			Annotations:     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
		}}}) {
			return
		}
		if after != nil {
			after()
		}
	}()
	return w, nil
}

// sourceWatch is one WATCH: unbuffered, so a send returns only once the
// reflector has taken the event, that is, once it has handled the one
// before it.
type sourceWatch struct {
	ch      chan watch.Event
	stopped chan struct{}
	once    sync.Once
	closed  sync.Once
}

func (w *sourceWatch) ResultChan() <-chan watch.Event { return w.ch }
func (w *sourceWatch) Stop()                          { w.once.Do(func() { close(w.stopped) }) }

func (w *sourceWatch) send(ev watch.Event) bool {
	select {
	case w.ch <- ev:
		return true
	case <-w.stopped:
		return false
	}
}

func (w *sourceWatch) closeEarly() { w.closed.Do(func() { close(w.ch) }) }
