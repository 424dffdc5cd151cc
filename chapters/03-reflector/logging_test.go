package reflector

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	kcache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
)

// bufferedLogger is a klog logger that keeps what it is given, at every
// verbosity, without writing to the test's output.
func bufferedLogger() (logr.Logger, func() string) {
	l := ktesting.NewLogger(&ktesting.BufferTL{}, ktesting.NewConfig(ktesting.Verbosity(10), ktesting.BufferLogs(true)))
	return l, func() string { return l.GetSink().(ktesting.Underlier).GetBuffer().String() }
}

// levelLogger is a logger that keeps each line as "V(level) message", one a
// line, errors as "ERROR message": what a test of verbosities reads.
func levelLogger() (logr.Logger, func() string) {
	sink := &levelSink{}
	return logr.New(sink), sink.String
}

type levelSink struct {
	mu    sync.Mutex
	lines strings.Builder
}

func (s *levelSink) Init(logr.RuntimeInfo)          {}
func (s *levelSink) Enabled(int) bool               { return true }
func (s *levelSink) WithName(string) logr.LogSink   { return s }
func (s *levelSink) WithValues(...any) logr.LogSink { return s }
func (s *levelSink) Info(level int, msg string, _ ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(&s.lines, "V(%d) %s\n", level, msg)
}
func (s *levelSink) Error(_ error, msg string, _ ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(&s.lines, "ERROR %s\n", msg)
}
func (s *levelSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lines.String()
}

// theirsListFirst makes client-go's reflector LIST, as listFirst makes
// ours: its ListerWatcher says its client cannot stream.
func theirsListFirst(lw *kcache.ListWatch) kcache.ListerWatcher {
	return kcache.ToListWatcherWithWatchListSemantics(lw, notStreamingClient{unsupported: true})
}

// forbiddenList answers every LIST with 403: each cycle fails and is
// handed to the default WatchErrorHandler.
func forbiddenList(context.Context, metav1.ListOptions) (runtime.Object, error) {
	return nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", nil)
}

func neverWatch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}

// The logger a caller puts in the reflector's context gets what the
// reflector logs, as client-go's does with the same context: its start,
// and a failed cycle through the default WatchErrorHandler
// (utilruntime.HandleErrorWithContext, "Failed to watch"). Before, ours
// logged through log/slog's default logger and the context's logger heard
// nothing.
func TestReflectorLogsThroughTheContextsKlogLogger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		oursLog, oursText := bufferedLogger()
		theirsLog, theirsText := bufferedLogger()
		ours := NewReflectorWithOptions(&ListWatch{ListWithContextFunc: forbiddenList, WatchFuncWithContext: neverWatch},
			&corev1.Pod{}, store.NewStore(store.MetaNamespaceKeyFunc), ReflectorOptions{Name: "ours", UseWatchList: listFirst})
		theirs := kcache.NewReflectorWithOptions(theirsListFirst(&kcache.ListWatch{ListWithContextFunc: forbiddenList, WatchFuncWithContext: neverWatch}),
			&corev1.Pod{}, kcache.NewStore(kcache.MetaNamespaceKeyFunc), kcache.ReflectorOptions{Name: "theirs"})

		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { ours.RunWithContext(klog.NewContext(ctx, oursLog)) })
		wg.Go(func() { theirs.RunWithContext(klog.NewContext(ctx, theirsLog)) })
		synctest.Wait() // both failed their first LIST and wait out the backoff
		cancel()
		wg.Wait()

		for name, text := range map[string]string{"client-go's": theirsText(), "ours": oursText()} {
			assert.Contains(t, text, "Starting reflector", "%s start, at V(3):\n%s", name, text)
			assert.Contains(t, text, "Failed to watch", "%s failed cycle, through utilruntime.HandleErrorWithContext:\n%s", name, text)
			assert.Contains(t, text, "is forbidden", "%s: the error itself:\n%s", name, text)
			assert.Contains(t, text, "Listing and watching", "%s cycle start, at V(3):\n%s", name, text)
			assert.Contains(t, text, "Stopping reflector", "%s stop:\n%s", name, text)
		}
		assert.Contains(t, oursText(), `reflector="ours"`)
	})
}

// panickyStore panics on its first Replace.
type panickyStore struct {
	store.Store
	replaces atomic.Int32
}

func (s *panickyStore) Replace(list []any, rv string) error {
	if s.replaces.Add(1) == 1 {
		panic("the store's first Replace panics")
	}
	return s.Store.Replace(list, rv)
}

type theirPanickyStore struct {
	kcache.Store
	replaces atomic.Int32
}

func (s *theirPanickyStore) Replace(list []any, rv string) error {
	if s.replaces.Add(1) == 1 {
		panic("the store's first Replace panics")
	}
	return s.Store.Replace(list, rv)
}

// A panic during a cycle goes through utilruntime.HandleCrashWithContext,
// as upstream's wait loop sends it: logged through the context's logger,
// handed to utilruntime.PanicHandlers, and, with utilruntime.ReallyCrash
// false (a program's choice; the default true re-panics), the reflector
// backs off and lists again. Before, ours had no such handling: the panic
// ended the process whatever ReallyCrash said.
func TestAPanicInACycleIsHandledAsUpstreamsRunHandlesIt(t *testing.T) {
	defer func(old bool) { utilruntime.ReallyCrash = old }(utilruntime.ReallyCrash)
	utilruntime.ReallyCrash = false
	var panics atomic.Int32
	oldHandlers := utilruntime.PanicHandlers
	utilruntime.PanicHandlers = append(utilruntime.PanicHandlers[:len(oldHandlers):len(oldHandlers)],
		func(context.Context, any) { panics.Add(1) })
	defer func() { utilruntime.PanicHandlers = oldHandlers }()

	synctest.Test(t, func(t *testing.T) {
		var oursLists, theirsLists atomic.Int32
		list := func(n *atomic.Int32) func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				n.Add(1)
				return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "5"}, Items: []corev1.Pod{*pod("a", "p0")}}, nil
			}
		}
		oursStore := &panickyStore{Store: store.NewStore(store.MetaNamespaceKeyFunc)}
		theirsStore := &theirPanickyStore{Store: kcache.NewStore(kcache.MetaNamespaceKeyFunc)}
		ours := NewReflectorWithOptions(&ListWatch{ListWithContextFunc: list(&oursLists), WatchFuncWithContext: neverWatch},
			&corev1.Pod{}, oursStore, ReflectorOptions{Name: "ours", UseWatchList: listFirst})
		theirs := kcache.NewReflectorWithOptions(theirsListFirst(&kcache.ListWatch{ListWithContextFunc: list(&theirsLists), WatchFuncWithContext: neverWatch}),
			&corev1.Pod{}, theirsStore, kcache.ReflectorOptions{Name: "theirs"})
		oursLog, oursText := bufferedLogger()
		theirsLog, theirsText := bufferedLogger()

		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { ours.RunWithContext(klog.NewContext(ctx, oursLog)) })
		wg.Go(func() { theirs.RunWithContext(klog.NewContext(ctx, theirsLog)) })
		synctest.Wait()
		time.Sleep(5 * time.Second) // past the first backoff delay of both
		synctest.Wait()
		cancel()
		wg.Wait()

		assert.Equal(t, int32(2), theirsLists.Load(), "client-go listed again after the panic")
		assert.Equal(t, theirsLists.Load(), oursLists.Load(), "LISTs")
		assert.Equal(t, []string{"a/p0"}, oursStore.ListKeys(), "the second cycle filled the store")
		assert.Equal(t, int32(2), panics.Load(), "each reflector's panic reached utilruntime.PanicHandlers")
		for name, text := range map[string]string{"client-go's": theirsText(), "ours": oursText()} {
			require.True(t, strings.Contains(text, "Observed a panic"), "%s panic logged through the context's logger:\n%s", name, text)
			assert.Equal(t, 1, strings.Count(text, "Caches populated"), "%s: the second cycle populated the cache, at V(2):\n%s", name, text)
		}
	})
}
