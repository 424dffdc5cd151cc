package reflector

// The streamed initial state (watch-list), the default: what the reflector
// asks for, when it streams again, when it falls back to a LIST, and who can
// switch it off. The differential tests against client-go's reflector are in
// watchlist_oracle_test.go.

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// streaming reports whether a watch request asks for the initial state.
func streaming(o metav1.ListOptions) bool { return o.SendInitialEvents != nil && *o.SendInitialEvents }

// cannotStream is what a kube-apiserver whose WatchList feature is off
// answers a streaming request: 422 Invalid, naming sendInitialEvents.
func cannotStream() error {
	return apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}, "",
		field.ErrorList{field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled")})
}

// watchRequestLog records the verb and options of every request a ListWatch saw.
type watchRequestLog struct {
	mu   sync.Mutex
	reqs []string
}

func (l *watchRequestLog) add(verb string, o metav1.ListOptions) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := verb + " rv=" + o.ResourceVersion
	if streaming(o) {
		r += " sendInitialEvents rvm=" + string(o.ResourceVersionMatch)
	}
	l.reqs = append(l.reqs, r)
}

func (l *watchRequestLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

// logged wraps lw so every request is recorded in log, and lets watch
// replace the watch call (nil: pass through).
func logged(lw *ListWatch, log *watchRequestLog, watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) *ListWatch {
	if watchFn == nil {
		watchFn = lw.WatchWithContext
	}
	return &ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			log.add("LIST", o)
			return lw.ListWithContext(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			log.add("WATCH", o)
			return watchFn(ctx, o)
		},
	}
}

func TestWatchListFallsBackToAListWhenTheServerCannotStream(t *testing.T) {
	e := newEnv(t)
	e.createPods("a", 2)
	log := &watchRequestLog{}
	lw := logged(e.lw, log, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		if streaming(o) {
			return nil, cannotStream()
		}
		return e.lw.WatchWithContext(ctx, o)
	})
	rec := tracetest.NewSpanRecorder()
	s, errs := newRecordingStore(), &errorLog{}
	r := newTestReflector(lw, s, errs, ReflectorOptions{Name: "pods", TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))})
	require.True(t, r.UsesWatchList(), "streaming is the default")
	run(t, r)
	testutil.Eventually(t, "synced and watching", func() bool { return len(s.keys()) == 2 && e.srv.WatchCount() == 1 })

	assert.Equal(t, []string{"WATCH rv= sendInitialEvents rvm=NotOlderThan", "LIST rv=0", "WATCH rv=3"}, log.all(),
		"the stream is refused, so the classic conversation follows: LIST at 0, WATCH from the list's RV")
	assert.Equal(t, "3", r.LastSyncResourceVersion())
	assert.Empty(t, errs.all(), "the fallback is not a failure: the LIST worked")

	// The refused stream is a failed Reflector.watchlist span, and the
	// cycle span says why it fell back (ended only at the next cycle, so
	// read it through the started spans).
	var wl sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		if sp.Name() == tracing.SpanWatchList {
			wl = sp
		}
	}
	require.NotNil(t, wl, "the refused stream has its span")
	assert.Equal(t, codes.Error, wl.Status().Code)
	assert.Equal(t, trace.SpanKindClient, wl.SpanKind())
	var cycle sdktrace.ReadWriteSpan
	for _, sp := range rec.Started() {
		if sp.Name() == tracing.SpanListAndWatchCycle {
			cycle = sp
		}
	}
	require.NotNil(t, cycle)
	var fallback []sdktrace.Event
	for _, ev := range cycle.Events() {
		if ev.Name == tracing.EventWatchListFallback {
			fallback = append(fallback, ev)
		}
	}
	require.Len(t, fallback, 1)
	assert.Contains(t, fallback[0].Attributes, tracing.KeyFallbackReason.String(cannotStream().Error()))
}

// cutWatch forwards the first n events of w, then closes: a stream that
// ends before its bookmark.
type cutWatch struct {
	w    watch.Interface
	out  chan watch.Event
	stop chan struct{}
	once sync.Once
}

func cut(w watch.Interface, n int) watch.Interface {
	c := &cutWatch{w: w, out: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(c.out)
		defer w.Stop()
		for range n {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				select {
				case c.out <- ev:
				case <-c.stop:
					return
				}
			case <-c.stop:
				return
			}
		}
	}()
	return c
}

func (c *cutWatch) ResultChan() <-chan watch.Event { return c.out }
func (c *cutWatch) Stop()                          { c.once.Do(func() { close(c.stop) }) }

func TestWatchListStreamsAgainWhenTheStreamClosesBeforeItsBookmark(t *testing.T) {
	e := newEnv(t)
	e.createPods("a", 3)
	log := &watchRequestLog{}
	streams := 0
	lw := logged(e.lw, log, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		w, err := e.lw.WatchWithContext(ctx, o)
		if err == nil && streaming(o) {
			if streams++; streams == 1 {
				return cut(w, 2), nil // two of three objects, no bookmark
			}
		}
		return w, err
	})
	s, errs := newRecordingStore(), &errorLog{}
	r := newTestReflector(lw, s, errs, ReflectorOptions{})
	run(t, r)
	testutil.Eventually(t, "synced", func() bool { return len(s.keys()) == 3 })

	assert.Equal(t, []string{"WATCH rv= sendInitialEvents rvm=NotOlderThan", "WATCH rv= sendInitialEvents rvm=NotOlderThan"}, log.all(),
		"an incomplete stream is streamed again, not answered with a LIST")
	assert.Equal(t, []string{"Replace"}, s.callsSnapshot(), "the half stream never reached the store")
	assert.Equal(t, "4", r.LastSyncResourceVersion())
	assert.Empty(t, errs.all())
}

func TestWatchListAfterA410StreamsAgain(t *testing.T) {
	e := newEnv(t)
	e.createPods("a", 2)
	log := &watchRequestLog{}
	s, errs := newRecordingStore(), &errorLog{}
	r := newTestReflector(logged(e.lw, log, nil), s, errs, ReflectorOptions{})
	run(t, r)
	testutil.Eventually(t, "synced", func() bool { return len(s.keys()) == 2 })
	require.NoError(t, e.srv.Delete(apiserver.Pods, "a", "p0"))
	testutil.Eventually(t, "delete applied", func() bool { return len(s.keys()) == 1 })
	rv := r.LastSyncResourceVersion()

	// The history is compacted past our RV and the watch dropped: the
	// re-watch gets 410, and the next cycle streams the whole state again,
	// from the last synced RV (not from "": upstream does not mark the RV
	// unavailable on a watch's 410).
	_, err := e.srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "x"}})
	require.NoError(t, err)
	e.srv.Compact()
	e.srv.CloseWatches()
	if !testutil.WaitFor(func() bool { return len(log.all()) >= 3 }) {
		t.Fatalf("not streamed again: requests %v, errors %v", log.all(), errs.all())
	}
	assert.Equal(t, []string{
		"WATCH rv= sendInitialEvents rvm=NotOlderThan",
		"WATCH rv=" + rv,
		"WATCH rv=" + rv + " sendInitialEvents rvm=NotOlderThan",
	}, log.all()[:3])
	assert.NotContains(t, log.all(), "LIST rv="+rv, "no LIST at all")
	testutil.Eventually(t, "second Replace", func() bool { return slices.Equal(s.callsSnapshot(), []string{"Replace", "Delete", "Replace"}) })
	require.NotNil(t, errs.find(isExpiredError), "the 410 is reported: %v", errs.all())
}

// notStreamingClient stands in for a client that cannot stream (client-go's
// fake clientset answers this way).
type notStreamingClient struct{ unsupported bool }

func (c notStreamingClient) IsWatchListSemanticsUnSupported() bool { return c.unsupported }

func TestAListerWatcherThatOptsOutIsListed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		client any
		stream bool
	}{
		{"a client that says it cannot stream", notStreamingClient{unsupported: true}, false},
		{"a client that says it can", notStreamingClient{unsupported: false}, true},
		{"a client that says nothing", struct{}{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.createPods("a", 1)
			log := &watchRequestLog{}
			lw := ToListWatcherWithWatchListSemantics(logged(e.lw, log, nil), tc.client)
			s := newRecordingStore()
			r := newTestReflector(lw, s, &errorLog{}, ReflectorOptions{})
			assert.Equal(t, tc.stream, r.UsesWatchList())
			run(t, r)
			testutil.Eventually(t, "synced", func() bool { return len(s.keys()) == 1 })
			first := log.all()[0]
			if tc.stream {
				assert.Equal(t, "WATCH rv= sendInitialEvents rvm=NotOlderThan", first)
			} else {
				assert.Equal(t, "LIST rv=0", first)
			}
		})
	}
	t.Run("the opt-out wins over UseWatchList", func(t *testing.T) {
		lw := ToListWatcherWithWatchListSemantics(&ListWatch{}, notStreamingClient{unsupported: true})
		r := NewReflectorWithOptions(lw, nil, newRecordingStore(), ReflectorOptions{UseWatchList: new(true)})
		assert.False(t, r.UsesWatchList())
	})
}

// The gate is read from the environment once per process (by client-go's
// registry, which ours asks), so each setting runs in a child process of
// this test binary.
func TestTheWatchListClientGateComesFromTheEnvironment(t *testing.T) {
	if v, ok := os.LookupEnv("REFLECTOR_GATE_CHILD"); ok {
		r := NewReflectorWithOptions(&ListWatch{}, nil, newRecordingStore(), ReflectorOptions{})
		if got := r.UsesWatchList(); got != (v == "stream") {
			t.Fatalf("KUBE_FEATURE_WatchListClient=%q: UsesWatchList() = %v", os.Getenv("KUBE_FEATURE_WatchListClient"), got)
		}
		return
	}
	for _, tc := range []struct {
		value, want string
	}{
		{"false", "list"},
		{"0", "list"},
		{"true", "stream"},
		{"not-a-bool", "stream"}, // reported, and the default kept
	} {
		t.Run(tc.value, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestTheWatchListClientGateComesFromTheEnvironment$", "-test.count=1")
			cmd.Env = append(os.Environ(), "REFLECTOR_GATE_CHILD="+tc.want, "KUBE_FEATURE_WatchListClient="+tc.value)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			if tc.value == "not-a-bool" {
				assert.Contains(t, string(out), `not-a-bool`)
				// Reported by client-go's registry, which ours reads.
				assert.Contains(t, string(out), `Could not set feature gate`)
				assert.Contains(t, string(out), `feature="WatchListClient"`)
			}
		})
	}
}

// transformingStore is a ReflectorStore with a transformer, as chapter 4's
// queues are.
type transformingStore struct {
	*recordingStore
	transform store.TransformFunc
}

func (s transformingStore) Transformer() store.TransformFunc { return s.transform }

func TestWatchListGathersTheStreamThroughTheStoresTransformer(t *testing.T) {
	e := newEnv(t)
	e.createPods("a", 2)
	var got []any
	s := transformingStore{recordingStore: newRecordingStore(), transform: func(obj any) (any, error) {
		p := obj.(*corev1.Pod).DeepCopy()
		p.ManagedFields = nil
		p.Labels = map[string]string{"slim": "yes"}
		return p, nil
	}}
	s.onReplace = func() {}
	r := newTestReflector(e.lw, s, &errorLog{}, ReflectorOptions{})
	run(t, r)
	testutil.Eventually(t, "synced", func() bool { return len(s.keys()) == 2 })
	got = s.List()
	for _, obj := range got {
		assert.Equal(t, "yes", obj.(*corev1.Pod).Labels["slim"], "the temporary store held the transformed objects")
	}
}

func TestAStreamWithoutItsBookmarkIsReportedEvery10s(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := watch.NewFake()
		lw := &ListWatch{
			ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				return nil, errors.New("no LIST expected")
			},
			WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return fake, nil },
		}
		errs := &errorLog{}
		r := newTestReflector(lw, newRecordingStore(), errs, ReflectorOptions{Name: "quiet"})
		stop := runInBubble(r)
		defer stop()
		time.Sleep(25 * time.Second)
		synctest.Wait()
		require.Len(t, errs.all(), 2, "one report per 10 s without the bookmark: %v", errs.all())
		assert.Contains(t, errs.all()[0].Error(), "quiet: the watch-list stream of *v1.Pod has sent no event in 10s and no initial-events-end bookmark")
		assert.Contains(t, errs.all()[0].Error(), "IsWatchListSemanticsUnSupported")

		late := pod("a", "late")
		late.ResourceVersion = "5"
		fake.Add(late)
		time.Sleep(25 * time.Second)
		synctest.Wait()
		// Ticks at 30 s (the event 5 s old: quiet is not overdue yet), 40 s
		// and 50 s.
		require.Len(t, errs.all(), 4, "%v", errs.all())
		assert.Contains(t, errs.all()[2].Error(), "sent 1 events, the last 15s ago, but not yet its initial-events-end bookmark")
	})
}

func TestWatchListSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	e := newEnv(t)
	e.createPods("a", 2)
	r := newTestReflector(e.lw, newRecordingStore(), &errorLog{}, ReflectorOptions{Name: "pods",
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))})
	run(t, r)
	testutil.Eventually(t, "watching", func() bool { return r.LastSyncResourceVersion() == "3" })
	var wl sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		if sp.Name() == tracing.SpanWatchList {
			wl = sp
		}
	}
	require.NotNil(t, wl)
	assert.Equal(t, trace.SpanKindClient, wl.SpanKind())
	assert.Contains(t, wl.Attributes(), tracing.KeyResourceVersion.String("3"), "the bookmark's RV")
	assert.Contains(t, wl.Attributes(), tracing.KeyListCount.Int(2))
	assert.Contains(t, wl.Attributes(), tracing.KeyInformerName.String("pods"))
	var cycle sdktrace.ReadWriteSpan
	for _, sp := range rec.Started() {
		if sp.Name() == tracing.SpanListAndWatchCycle {
			cycle = sp
		}
	}
	require.NotNil(t, cycle)
	assert.Equal(t, cycle.SpanContext().SpanID(), wl.Parent().SpanID(), "a child of the cycle span")
	for _, sp := range rec.Ended() {
		assert.NotEqual(t, tracing.SpanList, sp.Name(), "no LIST")
	}
}
