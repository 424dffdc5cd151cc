package reflector

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/kube"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// fastBackoff keeps HTTP tests quick; the real pacing is tested exactly,
// in fake time, in synctest_test.go.
// Steps as wait.Backoff's: without it the delay would never grow.
var fastBackoff = &Backoff{Duration: 5 * time.Millisecond, Factor: 2, Steps: 100, Cap: 40 * time.Millisecond, ResetAfter: time.Minute}

// listFirst makes a test reflector LIST its initial state, as client-go's
// does with the WatchListClient gate off: the tests of the LIST path use it.
// The default (streamed) path has its own tests (watchlist_test.go) and the
// differential ones against client-go.
var listFirst = new(false)

// recordingStore is a chapter-1 store that also records the calls the
// reflector made, and can be told to fail the next Replace.
type recordingStore struct {
	store.Store
	mu          sync.Mutex
	calls       []string
	resyncs     int
	failReplace int
	onReplace   func()
}

func newRecordingStore() *recordingStore {
	return &recordingStore{Store: store.NewStore(store.MetaNamespaceKeyFunc)}
}

func (s *recordingStore) record(c string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
}

func (s *recordingStore) Add(obj any) error    { s.record("Add"); return s.Store.Add(obj) }
func (s *recordingStore) Update(obj any) error { s.record("Update"); return s.Store.Update(obj) }
func (s *recordingStore) Delete(obj any) error { s.record("Delete"); return s.Store.Delete(obj) }
func (s *recordingStore) Resync() error {
	s.mu.Lock()
	s.resyncs++
	s.mu.Unlock()
	return nil
}

func (s *recordingStore) Replace(list []any, rv string) error {
	s.record("Replace")
	if s.onReplace != nil {
		s.onReplace()
	}
	s.mu.Lock()
	fail := s.failReplace > 0
	if fail {
		s.failReplace--
	}
	s.mu.Unlock()
	if fail {
		return fmt.Errorf("replace refused by the test")
	}
	return s.Store.Replace(list, rv)
}

func (s *recordingStore) callsSnapshot() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

func (s *recordingStore) resyncCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resyncs
}

func (s *recordingStore) keys() []string {
	k := s.ListKeys()
	slices.Sort(k)
	return k
}

// errorLog collects what reaches the WatchErrorHandler.
type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorLog) handler(_ *Reflector, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

func (l *errorLog) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.errs)
}

func (l *errorLog) find(match func(error) bool) error {
	for _, e := range l.all() {
		if match(e) {
			return e
		}
	}
	return nil
}

// env is an embedded API server with a pod ListWatch over real HTTP.
type env struct {
	t   *testing.T
	srv *apiserver.Server
	lw  *ListWatch
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	client, err := kube.RESTClientFor(srv.Config(), corev1.SchemeGroupVersion)
	require.NoError(t, err)
	return &env{t: t, srv: srv, lw: NewListWatchFromClient(client, "pods", metav1.NamespaceAll, fields.Everything())}
}

// The embedded server's in-process ListerWatcher serves this chapter's
// reflector as it serves client-go's.
var (
	_ ListerWatcher            = (*apiserver.ListerWatcher)(nil)
	_ ListerWatcherWithContext = (*apiserver.ListerWatcher)(nil)
)

// directLW returns the server's in-process pod ListerWatcher (for synctest)
// as a ListWatch, whose functions a test may wrap to count or hold calls.
func directLW(srv *apiserver.Server) *ListWatch {
	lw := srv.ListerWatcher(apiserver.Pods, metav1.NamespaceAll)
	return &ListWatch{ListWithContextFunc: lw.ListWithContext, WatchFuncWithContext: lw.WatchWithContext}
}

func pod(ns, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func (e *env) createPods(ns string, n int) {
	e.t.Helper()
	for i := range n {
		_, err := e.srv.Create(pod(ns, "p"+strconv.Itoa(i)))
		require.NoError(e.t, err)
	}
}

// watchingListFirst runs, for t, a list-first test reflector on lw with a
// recording store and an error log, and returns once its WATCH is open: how
// most tests of what the reflector does with a watch begin.
func (e *env) watchingListFirst(t *testing.T, lw ListerWatcher) (*Reflector, *recordingStore, *errorLog) {
	t.Helper()
	s, errs := newRecordingStore(), &errorLog{}
	r := newTestReflector(lw, s, errs, ReflectorOptions{UseWatchList: listFirst})
	run(t, r)
	testutil.Eventually(t, "watching", func() bool { return e.srv.WatchCount() == 1 })
	return r, s, errs
}

// run starts r and stops it when the test ends.
func run(t *testing.T, r *Reflector) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.RunWithContext(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// requests returns the server's log of pod requests of the given verbs.
func (e *env) requests(verbs ...string) []apiserver.Request {
	var out []apiserver.Request
	for _, r := range e.srv.Requests() {
		if r.Resource == "pods" && slices.Contains(verbs, r.Verb) {
			out = append(out, r)
		}
	}
	return out
}

func newTestReflector(lw ListerWatcher, s ReflectorStore, errs *errorLog, opts ReflectorOptions) *Reflector {
	if opts.Backoff == nil {
		opts.Backoff = fastBackoff
	}
	r := NewReflectorWithOptions(lw, &corev1.Pod{}, s, opts)
	r.SetWatchErrorHandler(errs.handler)
	return r
}

// bookmark moves the server's RV with a write to another resource, sends a
// bookmark, and waits until the reflector has it: proof that the current
// watch has delivered an event.
func (e *env) bookmark(r *Reflector) {
	e.t.Helper()
	// The request log records a watch before the server registers it; a
	// bookmark sent in between would reach no one.
	testutil.Eventually(e.t, "watch registered", func() bool { return e.srv.WatchCount() > 0 })
	_, err := e.srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "rv-" + e.srv.ResourceVersion()}})
	require.NoError(e.t, err)
	e.srv.SendBookmarks()
	want := e.srv.ResourceVersion()
	testutil.Eventually(e.t, "bookmark at RV "+want+" applied", func() bool { return r.LastSyncResourceVersion() == want })
}

// forceRelist makes the reflector's next watch fail with 410 Expired: the
// server's RV moves past the reflector's (a write to another resource), the
// history is compacted up to it, and the open watch is dropped.
func (e *env) forceRelist() {
	e.t.Helper()
	n := len(e.requests("list"))
	_, err := e.srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "rv-" + e.srv.ResourceVersion()}})
	require.NoError(e.t, err)
	e.srv.Compact()
	e.srv.CloseWatches()
	testutil.Eventually(e.t, "relisted", func() bool { return len(e.requests("list")) > n })
}
