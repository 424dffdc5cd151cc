package liveprobe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// The probe's request log says which request followed which and from
// which resourceVersion, with each one's outcome: a refused request's
// error, a watch ended by a 410 ERROR event; it keeps the last
// RecentRequests only.
func TestReflectorProbeLogsRequestsInOrder(t *testing.T) {
	fw := watch.NewFake()
	watches := 0
	p := NewReflectorProbe(&reflector.ListWatch{
		ListWithContextFunc: func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
			if o.ResourceVersion == "bad" {
				return nil, errors.New("refused")
			}
			return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			watches++
			if watches == 1 {
				return fw, nil
			}
			return watch.NewFake(), nil
		},
	})
	ctx := context.Background()
	_, err := p.ListWithContext(ctx, metav1.ListOptions{ResourceVersion: "0"})
	require.NoError(t, err)
	w, err := p.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "7"})
	require.NoError(t, err)
	go fw.Error(&apierrors.NewResourceExpired("too old").ErrStatus)
	ev := <-w.ResultChan() // relayed once the probe has noted it
	assert.Equal(t, watch.Error, ev.Type)
	w.Stop()
	_, err = p.ListWithContext(ctx, metav1.ListOptions{ResourceVersion: "bad"})
	require.Error(t, err)

	st := p.State()
	assert.Equal(t, []ProbedRequest{
		{Verb: "LIST", ResourceVersion: "0"},
		{Verb: "WATCH", ResourceVersion: "7", Outcome: "ERROR Expired"},
		{Verb: "LIST", ResourceVersion: "bad", Outcome: "refused"},
	}, st.Requests)
	st.Requests[0].Verb = "changed"
	assert.Equal(t, "LIST", p.State().Requests[0].Verb, "State returns a copy")

	for i := range RecentRequests {
		_, err := p.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: fmt.Sprint(100 + i)})
		require.NoError(t, err)
	}
	st = p.State()
	require.Len(t, st.Requests, RecentRequests)
	assert.Equal(t, "100", st.Requests[0].ResourceVersion)
	assert.Equal(t, fmt.Sprint(100+RecentRequests-1), st.Requests[RecentRequests-1].ResourceVersion)
}

// streamOptions are the options of the reflector's streaming request.
func streamOptions(rv string) metav1.ListOptions {
	yes := true
	return metav1.ListOptions{ResourceVersion: rv, SendInitialEvents: &yes, AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
}

func pod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// initialEventsEnd is the bookmark that ends a stream's initial state.
func initialEventsEnd(rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv,
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
}

// watchesInTurn is a ListerWatcher whose LIST is empty, whose first watch
// is first and every later one later.
func watchesInTurn(first, later watch.Interface) *reflector.ListWatch {
	watches := 0
	return &reflector.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &corev1.PodList{}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			if watches++; watches == 1 {
				return first, nil
			}
			return later, nil
		},
	}
}

// A streaming request (sendInitialEvents=true) is its own phase, STREAM,
// counted apart from plain WATCHes and LISTs, with the objects it has sent
// so far; its initial-events-end bookmark ends the phase (the same watch
// goes on as the WATCH) and is remembered with the request. A stream that
// closes before its bookmark says so.
func TestReflectorProbeShowsTheStream(t *testing.T) {
	fw, cut := watch.NewFake(), watch.NewFake()
	p := NewReflectorProbe(watchesInTurn(fw, cut))
	w, err := p.WatchWithContext(context.Background(), streamOptions(""))
	require.NoError(t, err)
	st := p.State()
	assert.Equal(t, VerbStream, st.Phase)
	assert.Equal(t, []int{1, 0, 0}, []int{st.Streams, st.Lists, st.Watches}, "streams, lists, watches")

	relay := func(send func()) watch.Event {
		go send()
		return <-w.ResultChan() // relayed once the probe has noted it
	}
	relay(func() { fw.Add(pod("a", "5")) })
	relay(func() { fw.Add(pod("b", "3")) })
	st = p.State()
	assert.Equal(t, VerbStream, st.Phase, "no bookmark yet")
	assert.Equal(t, 2, st.Streamed)
	assert.Equal(t, []ProbedRequest{{Verb: VerbStream, Objects: 2}}, st.Requests)
	assert.Equal(t, "STREAM from the latest · 2 objects so far…", st.Requests[0].String())
	assert.Empty(t, st.ResourceVersion, "the streamed objects come in no resourceVersion order: the stream is at the RV it asked for")

	relay(func() { fw.Action(watch.Bookmark, initialEventsEnd("9")) })
	st = p.State()
	assert.Equal(t, VerbWatch, st.Phase, "the same watch goes on after the bookmark")
	assert.Equal(t, "9", st.Bookmark)
	assert.Equal(t, "9", st.ResourceVersion)
	assert.Equal(t, FetchedStream, st.Fetched)
	assert.Equal(t, []ProbedRequest{{Verb: VerbStream, Objects: 2, Bookmark: "9"}}, st.Requests)
	assert.Equal(t, "STREAM from the latest · 2 objects · bookmark rv 9", st.Requests[0].String())
	assert.Zero(t, st.WatchEvents, "the initial state is not counted as watch events")

	relay(func() { fw.Modify(pod("a", "10")) })
	st = p.State()
	assert.Equal(t, 1, st.WatchEvents)
	assert.Equal(t, "10", st.ResourceVersion)
	assert.Equal(t, 2, st.Streamed, "a change after the bookmark is not a streamed object")
	assert.Equal(t, []int{1, 0, 0}, []int{st.Streams, st.Lists, st.Watches}, "the stream is not counted again as a WATCH")
	w.Stop()

	// A second stream, cut after one object.
	w, err = p.WatchWithContext(context.Background(), streamOptions("10"))
	require.NoError(t, err)
	go func() { cut.Add(pod("a", "10")); cut.Stop() }()
	for range w.ResultChan() {
	}
	st = p.State()
	assert.Equal(t, PhaseIdle, st.Phase)
	assert.Equal(t, 1, st.Streamed, "the count restarts with each stream")
	assert.Equal(t, ProbedRequest{Verb: VerbStream, ResourceVersion: "10", Objects: 1, Outcome: OutcomeClosedEarly}, st.Requests[1])
	assert.Equal(t, "STREAM from 10 · 1 object · closed before its bookmark", st.Requests[1].String())
	assert.Equal(t, 2, st.Streams)
}

// The probe passes on its ListerWatcher's watch-list opt-out: a reflector
// built on the probe of a ListerWatcher that cannot stream LISTs, as it
// would without the probe (before, wrapping hid the opt-out and the
// reflector streamed).
func TestReflectorProbeKeepsTheWatchListOptOut(t *testing.T) {
	lw := &reflector.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}, Items: []corev1.Pod{*pod("a", "7")}}, nil
		},
		WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
			if o.SendInitialEvents != nil && *o.SendInitialEvents {
				w := watch.NewFakeWithChanSize(2, false)
				w.Add(pod("a", "7"))
				w.Action(watch.Bookmark, initialEventsEnd("7"))
				return w, nil
			}
			return watch.NewFake(), nil
		},
	}
	for _, optOut := range []bool{true, false} {
		t.Run(fmt.Sprintf("opt-out=%t", optOut), func(t *testing.T) {
			p := NewReflectorProbe(reflector.ToListWatcherWithWatchListSemantics(lw, noWatchList(optOut)))
			assert.Equal(t, optOut, reflector.DoesClientNotSupportWatchListSemantics(p))

			useWatchList := true
			r := reflector.NewReflectorWithOptions(p, &corev1.Pod{}, store.NewStore(store.MetaNamespaceKeyFunc), reflector.ReflectorOptions{UseWatchList: &useWatchList})
			assert.Equal(t, !optOut, r.UsesWatchList())
			st := runUntilWatching(t, r, p)
			want := []ProbedRequest{{Verb: VerbStream, Objects: 1, Bookmark: "7"}}
			if optOut {
				want = []ProbedRequest{{Verb: VerbList, ResourceVersion: "0", Objects: 1}, {Verb: VerbWatch, ResourceVersion: "7"}}
			}
			assert.Equal(t, want, st.Requests)
		})
	}
}

// noWatchList is a client that says whether it can stream.
type noWatchList bool

func (n noWatchList) IsWatchListSemanticsUnSupported() bool { return bool(n) }

// runUntilWatching runs r until p shows an open WATCH, and returns p's
// state then.
func runUntilWatching(t *testing.T, r *reflector.Reflector, p *ReflectorProbe) ReflectorState {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for p.State().Phase != VerbWatch {
		if time.Now().After(deadline) {
			t.Fatalf("the reflector did not reach WATCH within 10s; the probe shows %+v", p.State())
		}
		time.Sleep(time.Millisecond)
	}
	return p.State()
}

// A server that cannot stream answers the stream 422 Invalid: the probe
// shows the refused stream by its status, then the LIST the reflector
// falls back to, then the WATCH from the list's resourceVersion.
func TestReflectorProbeShowsARefusedStreamAndTheFallback(t *testing.T) {
	p := NewReflectorProbe(&reflector.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}, Items: []corev1.Pod{*pod("a", "6"), *pod("b", "7")}}, nil
		},
		WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
			if o.SendInitialEvents != nil && *o.SendInitialEvents {
				return nil, apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}, "",
					field.ErrorList{field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled")})
			}
			return watch.NewFake(), nil
		},
	})
	useWatchList := true
	r := reflector.NewReflectorWithOptions(p, &corev1.Pod{}, store.NewStore(store.MetaNamespaceKeyFunc), reflector.ReflectorOptions{UseWatchList: &useWatchList})
	st := runUntilWatching(t, r, p)
	assert.Equal(t, []ProbedRequest{
		{Verb: VerbStream, Outcome: "422 Invalid"},
		{Verb: VerbList, ResourceVersion: "0", Objects: 2},
		{Verb: VerbWatch, ResourceVersion: "7"},
	}, st.Requests)
	assert.Equal(t, []int{1, 1, 1}, []int{st.Streams, st.Lists, st.Watches}, "streams, lists, watches")
	var lines []string
	for _, r := range st.Requests {
		lines = append(lines, r.String())
	}
	assert.Equal(t, []string{"STREAM from the latest · 422 Invalid", "LIST from 0 · 2 objects", "WATCH from 7"}, lines)
	assert.Zero(t, st.Streamed)
	assert.Empty(t, st.Bookmark)
	assert.Equal(t, FetchedList, st.Fetched)
	assert.Equal(t, 2, st.Listed)
}

// A request sent while the API server is down shows as "connection
// refused", not as the error's whole text (which repeats the URL).
func TestReflectorProbeNamesARefusedConnection(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "http://127.0.0.1:1/api/v1/pods?watch=true",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	p := NewReflectorProbe(&reflector.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) { return nil, refused },
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return nil, refused
		},
	})
	_, err := p.WatchWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "7"})
	require.Error(t, err)
	st := p.State()
	assert.Equal(t, []ProbedRequest{{Verb: VerbWatch, ResourceVersion: "7", Outcome: OutcomeConnectionRefused}}, st.Requests)
	assert.Equal(t, "WATCH from 7 · connection refused", st.Requests[0].String())
	assert.Contains(t, st.LastError, "127.0.0.1:1", "the last error keeps the whole text")
}

// An ERROR event names its reason whether the client decoded the Status as
// such (a typed client) or as an unstructured object (an unstructured
// client, as the demo's informer for a resource it has no type for): a
// kube-apiserver whose etcd lacks RequestWatchProgress ends a stream of a
// watch-cached resource with a 500 InternalError.
func TestReflectorProbeNamesTheReasonOfAnUnstructuredError(t *testing.T) {
	fw := watch.NewFake()
	p := NewReflectorProbe(watchesInTurn(fw, fw))
	w, err := p.WatchWithContext(context.Background(), streamOptions(""))
	require.NoError(t, err)
	status := &unstructured.Unstructured{Object: map[string]any{
		"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "InternalError", "code": int64(500),
		"message": "a watch stream was requested by the client but the required storage feature RequestWatchProgress is disabled",
	}}
	go fw.Error(status)
	<-w.ResultChan()
	st := p.State()
	assert.Equal(t, "STREAM from the latest · ERROR InternalError", st.Requests[0].String())
	assert.Equal(t, 1, st.WatchErrors)
}

// A lazy probe (dropin's, before any live view exists) logs every request
// but hands the reflector the watch itself, relaying no event: no cost per
// event. Once probeEvents says yes, the next watch is relayed and its
// events are counted, with the time of the last one.
func TestLazyReflectorProbeRelaysEventsOnlyWhenAsked(t *testing.T) {
	first, second := watch.NewFake(), watch.NewFake()
	on := false
	p := NewLazyReflectorProbe(watchesInTurn(first, second), func() bool { return on })
	w, err := p.WatchWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "3"})
	require.NoError(t, err)
	assert.Same(t, first, w, "not probed: the watch itself, no relay")
	st := p.State()
	assert.True(t, st.Unprobed)
	assert.Equal(t, []ProbedRequest{{Verb: VerbWatch, ResourceVersion: "3"}}, st.Requests, "the request is logged all the same")
	last, _ := p.Times()
	assert.True(t, last.IsZero())

	on = true
	w, err = p.WatchWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "3"})
	require.NoError(t, err)
	assert.NotSame(t, second, w, "probed: relayed")
	go second.Modify(pod("a", "4"))
	<-w.ResultChan()
	st = p.State()
	assert.False(t, st.Unprobed)
	assert.Equal(t, 1, st.WatchEvents)
	last, idle := p.Times()
	assert.False(t, last.IsZero(), "the last event's time")
	assert.True(t, idle.IsZero(), "watching, not idle")
	w.Stop()
}

// The last relist: the first LIST is the "start"; a watch ended by a 410
// ERROR event makes the next LIST's reason "410 Expired", and its peak the
// largest heap told while it ran (not one told after); a WATCH refused with
// a 500 makes the next a "watch error", whose pages add up; a stream ends
// at its initial-events-end bookmark.
func TestReflectorProbeShowsTheLastRelist(t *testing.T) {
	var p *ReflectorProbe
	var pages []*corev1.PodList
	var watchErr error
	fw := watch.NewFake()
	p = NewReflectorProbe(&reflector.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			p.NoteHeap(500)
			l := pages[0]
			pages = pages[1:]
			return l, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			if watchErr != nil {
				return nil, watchErr
			}
			return fw, nil
		},
	})
	_, ok := p.LastRelist()
	assert.False(t, ok, "none yet")
	p.NoteHeap(1000)
	list := func(cont string, objs ...string) {
		l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "7", Continue: cont}}
		for _, o := range objs {
			l.Items = append(l.Items, *pod(o, "7"))
		}
		pages = append(pages, l)
	}
	list("", "a", "b")
	_, err := p.List(metav1.ListOptions{})
	require.NoError(t, err)
	r, ok := p.LastRelist()
	require.True(t, ok)
	assert.Equal(t, "start", r.Reason)
	assert.Equal(t, 2, r.Objects)
	assert.False(t, r.Ended.Before(r.Started), "ended")
	assert.Equal(t, uint64(500), r.PeakHeap, "told while it ran; not the 1000 before it")

	w, err := p.Watch(metav1.ListOptions{ResourceVersion: "7"})
	require.NoError(t, err)
	go fw.Error(&apierrors.NewResourceExpired("too old resource version: 7 (9)").ErrStatus)
	<-w.ResultChan()
	w.Stop()
	list("", "a")
	_, err = p.List(metav1.ListOptions{})
	require.NoError(t, err)
	p.NoteHeap(900)
	r, _ = p.LastRelist()
	assert.Equal(t, "410 Expired", r.Reason)
	assert.Equal(t, 1, r.Objects)
	assert.Equal(t, uint64(500), r.PeakHeap, "the 900 came after it")

	watchErr = apierrors.NewInternalError(errors.New("etcd is away"))
	_, err = p.Watch(metav1.ListOptions{ResourceVersion: "7"})
	require.Error(t, err)
	list("more", "a")
	list("", "b", "c")
	_, err = p.List(metav1.ListOptions{})
	require.NoError(t, err)
	r, _ = p.LastRelist()
	assert.True(t, r.Ended.IsZero(), "one page of two: still fetching")
	_, err = p.List(metav1.ListOptions{Continue: "more"})
	require.NoError(t, err)
	r, _ = p.LastRelist()
	assert.Equal(t, "watch error: 500 InternalError", r.Reason)
	assert.Equal(t, 3, r.Objects, "both pages")
	assert.False(t, r.Ended.IsZero())
}

// A stream sent while its events are not relayed (a dropin informer's,
// before the live view existed) is a relist whose end the probe cannot
// see: it says so rather than "fetching" for ever.
func TestReflectorProbeSaysWhenARelistsEndIsUnseen(t *testing.T) {
	p := NewLazyReflectorProbe(&reflector.ListWatch{
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}, func() bool { return false })
	yes := true
	_, err := p.Watch(metav1.ListOptions{SendInitialEvents: &yes})
	require.NoError(t, err)
	r, ok := p.LastRelist()
	require.True(t, ok)
	assert.Equal(t, "start", r.Reason)
	assert.True(t, r.EndUnseen)
	assert.True(t, r.Ended.IsZero())
}

// The probe tells the byte estimate (CacheBytes.Follow) when a stream's
// objects may be transformed twice: open from the STREAM request, closed
// once the reflector reads the event after the initial-events-end
// bookmark (it reads on only after the Replace that transforms them
// again), or once the stream ends before that; a plain WATCH opens
// nothing.
func TestReflectorProbeTellsWhenAStreamsInitialStateIsBeingStored(t *testing.T) {
	fw, plain, cut := watch.NewFake(), watch.NewFake(), watch.NewFake()
	watches := 0
	p := NewReflectorProbe(&reflector.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) { return &corev1.PodList{}, nil },
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			watches++
			return []watch.Interface{fw, plain, cut}[watches-1], nil
		},
	})
	var mu sync.Mutex
	var told []bool
	p.streams = func(open bool) { mu.Lock(); told = append(told, open); mu.Unlock() }
	tellings := func() []bool { mu.Lock(); defer mu.Unlock(); return slices.Clone(told) }

	w, err := p.WatchWithContext(context.Background(), streamOptions(""))
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, tellings(), "the stream's request opens it")
	relay := func(w watch.Interface, send func()) {
		go send()
		<-w.ResultChan()
	}
	relay(w, func() { fw.Add(pod("a", "5")) })
	relay(w, func() { fw.Action(watch.Bookmark, initialEventsEnd("9")) })
	assert.Equal(t, []bool{true}, tellings(), "the bookmark read: the reflector Replaces now")
	relay(w, func() { fw.Modify(pod("a", "10")) })
	testutil.Eventually(t, "closed once the event after the bookmark is read", func() bool { return len(tellings()) == 2 })
	assert.Equal(t, []bool{true, false}, tellings())
	relay(w, func() { fw.Modify(pod("a", "11")) })
	w.Stop()

	w, err = p.WatchWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "11"})
	require.NoError(t, err)
	relay(w, func() { plain.Modify(pod("a", "12")) })
	w.Stop()
	assert.Equal(t, []bool{true, false}, tellings(), "a plain WATCH tells nothing")

	w, err = p.WatchWithContext(context.Background(), streamOptions("12"))
	require.NoError(t, err)
	go func() { cut.Add(pod("a", "12")); cut.Stop() }()
	for range w.ResultChan() {
	}
	testutil.Eventually(t, "closed when a stream ends before its bookmark", func() bool { return len(tellings()) == 4 })
	assert.Equal(t, []bool{true, false, true, false}, tellings())
}
