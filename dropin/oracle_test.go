package dropin_test

// Oracle tests: client-go's SharedIndexInformer and ours behind client-go's
// interface (dropin) run side by side in one synctest bubble, on the
// embedded API server reached in-process, with one script of writes. Every
// method of cache.SharedIndexInformer, cache.Indexer,
// cache.ResourceEventHandlerRegistration and cache.DoneChecker is asked of
// both, and the answers must be the same.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// inProcessLW lists and watches the embedded server's pods without HTTP, so
// both informers can run in a synctest bubble. It does not opt out of
// watch-list: both informers stream their initial state, as they do by
// default in v0.37.2.
func inProcessLW(srv *apiserver.Server) *apiserver.ListerWatcher {
	return srv.ListerWatcher(apiserver.Pods, metav1.NamespaceAll)
}

// recorder is a client-go handler that logs its calls. A delete whose
// final state was missed is logged as a tombstone only if it arrives as
// client-go's type, which is what client-go code type-asserts.
type recorder struct {
	mu    sync.Mutex
	calls []string
	// block, when set, makes OnUpdate wait for it to be closed.
	block chan struct{}
}

func podKey(obj any) (key, rv string) {
	p := obj.(*corev1.Pod)
	return p.Namespace + "/" + p.Name, p.ResourceVersion
}

func (r *recorder) record(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, s)
}

func (r *recorder) OnAdd(obj any, initial bool) {
	key, rv := podKey(obj)
	r.record(fmt.Sprintf("add %s@%s initial=%v", key, rv, initial))
}

func (r *recorder) OnUpdate(old, obj any) {
	r.mu.Lock()
	block := r.block
	r.mu.Unlock()
	if block != nil {
		<-block
	}
	key, rv := podKey(obj)
	_, oldRV := podKey(old)
	r.record(fmt.Sprintf("update %s@%s->%s", key, oldRV, rv))
}

func (r *recorder) OnDelete(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		key, rv := podKey(t.Obj)
		r.record(fmt.Sprintf("delete-tombstone %s (last %s@%s)", t.Key, key, rv))
		return
	}
	key, rv := podKey(obj)
	r.record(fmt.Sprintf("delete %s@%s", key, rv))
}

func (r *recorder) log() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// normalized sorts each run of tombstone deletes, of initial-list adds and
// of resync updates: client-go emits a relist's tombstones and a resync in
// its cache's map order, and a streamed initial state in its temporary
// store's map order (ours: in key order).
func normalized(calls []string) []string {
	return testutil.SortRuns(calls, isTombstone, isInitial, isResync)
}

func isTombstone(call string) bool { return strings.HasPrefix(call, "delete-tombstone ") }
func isInitial(call string) bool   { return strings.HasSuffix(call, " initial=true") }

// isResync: an update from a resourceVersion to itself.
func isResync(call string) bool {
	rest, ok := strings.CutPrefix(call, "update ")
	if !ok {
		return false
	}
	at := strings.LastIndexByte(rest, '@')
	from, to, ok := strings.Cut(rest[at+1:], "->")
	return ok && from == to
}

func cacheState(objs []any) map[string]string {
	out := map[string]string{}
	for _, o := range objs {
		k, rv := podKey(o)
		out[k] = rv
	}
	return out
}

// side is one informer with its handlers and their registrations.
type side struct {
	name string
	inf  cache.SharedIndexInformer
	recs []*recorder
	regs []cache.ResourceEventHandlerRegistration
	// unordered are ranges [from, to) of every handler's calls that are
	// compared as sets: the calls of a streamed relist, which client-go
	// makes in its temporary store's map order.
	unordered [][2]int
}

func (s *side) add(t *testing.T, r *recorder) {
	t.Helper()
	reg, err := s.inf.AddEventHandler(r)
	require.NoError(t, err, s.name)
	s.recs, s.regs = append(s.recs, r), append(s.regs, reg)
}

type server struct {
	t   *testing.T
	srv *apiserver.Server
}

func (s server) create(name string) {
	_, err := s.srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"app": "a"}}})
	require.NoError(s.t, err)
}

func (s server) relabel(name, app string) {
	obj, err := s.srv.Get(apiserver.Pods, "ns", name)
	require.NoError(s.t, err)
	p := obj.(*corev1.Pod).DeepCopy()
	p.Labels = map[string]string{"app": app}
	_, err = s.srv.Update(p)
	require.NoError(s.t, err)
}

func (s server) remove(name string) { require.NoError(s.t, s.srv.Delete(apiserver.Pods, "ns", name)) }

// relist breaks both informers' watches, makes the changes of during unseen
// by any watch, and compacts the history: each reconnect gets 410 and its
// informer relists (streams again), finding tombstones.
func (s server) relist(during func()) {
	stalls := []func(){s.srv.StallNext("watch"), s.srv.StallNext("watch")}
	s.srv.CloseWatches()
	synctest.Wait()
	during()
	s.srv.Compact()
	for _, release := range stalls {
		release()
	}
	synctest.Wait()
	time.Sleep(time.Minute) // past both reflectors' backoff
	synctest.Wait()
}

// startServer starts the embedded API server, stopped when the test ends
// (after the test's later cleanups, so informers stop first), and creates
// objs in it.
func startServer(t *testing.T, objs ...runtime.Object) *apiserver.Server {
	t.Helper()
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	for _, obj := range objs {
		_, err := srv.Create(obj)
		require.NoError(t, err)
	}
	return srv
}

// configMaps is ConfigMaps named names in namespace ns, to create.
func configMaps(ns string, names ...string) []runtime.Object {
	out := make([]runtime.Object, len(names))
	for i, n := range names {
		out[i] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n}}
	}
	return out
}

func newServer(t *testing.T, pods ...string) server {
	t.Helper()
	s := server{t, startServer(t)}
	for _, n := range pods {
		s.create(n)
	}
	return s
}

// pair makes both informers with build (given the ListerWatcher; nil: the
// plain constructors), n handlers each, and does not start them.
func pair(t *testing.T, s server, n int) (ours, theirs *side) {
	ours = &side{name: "dropin", inf: dropin.NewSharedIndexInformer(inProcessLW(s.srv), &corev1.Pod{}, 0, cache.Indexers{})}
	theirs = &side{name: "client-go", inf: cache.NewSharedIndexInformer(inProcessLW(s.srv), &corev1.Pod{}, 0, cache.Indexers{})}
	for range n {
		ours.add(t, &recorder{})
		theirs.add(t, &recorder{})
	}
	return ours, theirs
}

func run(t *testing.T, sides ...*side) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, s := range sides {
		wg.Go(func() { s.inf.RunWithContext(ctx) })
	}
	stop = sync.OnceFunc(func() { cancel(); wg.Wait() })
	t.Cleanup(stop)
	return stop
}

func requireSame(t *testing.T, step string, ours, theirs *side) {
	t.Helper()
	require.Equal(t, len(theirs.recs), len(ours.recs))
	for i := range ours.recs {
		want, got := theirs.recs[i].log(), ours.recs[i].log()
		require.Len(t, got, len(want), "%s: handler %d's calls: %v", step, i, got)
		at := 0
		for _, r := range ours.unordered {
			require.Equal(t, normalized(want[at:r[0]]), normalized(got[at:r[0]]), "%s: handler %d's calls", step, i)
			require.ElementsMatch(t, want[r[0]:r[1]], got[r[0]:r[1]], "%s: handler %d's relist calls", step, i)
			at = r[1]
		}
		require.Equal(t, normalized(want[at:]), normalized(got[at:]), "%s: handler %d's calls", step, i)
		require.Equal(t, theirs.regs[i].HasSynced(), ours.regs[i].HasSynced(), "%s: handler %d's HasSynced", step, i)
		require.Equal(t, isClosed(theirs.regs[i].HasSyncedChecker().Done()), isClosed(ours.regs[i].HasSyncedChecker().Done()),
			"%s: handler %d's HasSyncedChecker().Done()", step, i)
	}
	require.Equal(t, cacheState(theirs.inf.GetStore().List()), cacheState(ours.inf.GetStore().List()), "%s: cache", step)
	require.ElementsMatch(t, theirs.inf.GetIndexer().ListKeys(), ours.inf.GetIndexer().ListKeys(), "%s: ListKeys", step)
	require.Equal(t, theirs.inf.LastSyncResourceVersion(), ours.inf.LastSyncResourceVersion(), "%s: LastSyncResourceVersion", step)
	require.Equal(t, theirs.inf.GetStore().LastStoreSyncResourceVersion(), ours.inf.GetStore().LastStoreSyncResourceVersion(), "%s: LastStoreSyncResourceVersion", step)
	require.Equal(t, theirs.inf.HasSynced(), ours.inf.HasSynced(), "%s: HasSynced", step)
	require.Equal(t, isClosed(theirs.inf.HasSyncedChecker().Done()), isClosed(ours.inf.HasSyncedChecker().Done()), "%s: HasSyncedChecker", step)
	require.Equal(t, theirs.inf.IsStopped(), ours.inf.IsStopped(), "%s: IsStopped", step)
	require.Equal(t, theirs.inf.GetController().HasSynced(), ours.inf.GetController().HasSynced(), "%s: GetController().HasSynced", step)
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestDropinMatchesClientGo runs one script on both: the streamed initial
// state, watch events, a relist with tombstones, a late handler, a removed
// handler, and the stop.
func TestDropinMatchesClientGo(t *testing.T) {
	s := newServer(t, "a", "b", "c", "d")
	synctest.Test(t, func(t *testing.T) {
		s.t = t
		ours, theirs := pair(t, s, 2)
		requireSame(t, "before Run", ours, theirs)
		require.False(t, ours.inf.HasSynced())

		stop := run(t, ours, theirs)
		synctest.Wait()
		require.True(t, ours.inf.HasSynced())
		requireSame(t, "initial state", ours, theirs)
		require.Len(t, ours.recs[0].log(), 4)

		s.relabel("a", "b")
		s.remove("b")
		s.create("e")
		synctest.Wait()
		requireSame(t, "watch events", ours, theirs)

		from := len(ours.recs[0].log())
		s.relist(func() {
			s.remove("c")
			s.remove("d")
			s.create("f")
			s.relabel("a", "c")
		})
		ours.unordered = append(ours.unordered, [2]int{from, len(ours.recs[0].log())})
		requireSame(t, "relist", ours, theirs)
		tombstones := slices.DeleteFunc(ours.recs[0].log(), func(c string) bool { return !strings.HasPrefix(c, "delete-tombstone ") })
		require.Len(t, tombstones, 2, "the relist's removals reach a client-go handler as cache.DeletedFinalStateUnknown")

		// A handler added while running first hears of every cached
		// object; compared as a set, since both take them in map order.
		lo, lt := &recorder{}, &recorder{}
		ours.add(t, lo)
		theirs.add(t, lt)
		synctest.Wait()
		require.ElementsMatch(t, lt.log(), lo.log(), "late handler's synthetic adds")
		require.Len(t, lo.log(), 3)
		ours.recs, ours.regs = ours.recs[:2], ours.regs[:2]
		theirs.recs, theirs.regs = theirs.recs[:2], theirs.regs[:2]

		// A removed handler hears nothing more; the others do.
		require.NoError(t, ours.inf.RemoveEventHandler(ours.regs[1]))
		require.NoError(t, theirs.inf.RemoveEventHandler(theirs.regs[1]))
		require.NoError(t, ours.inf.RemoveEventHandler(ours.regs[1]), "removing twice is not an error")
		before := len(ours.recs[1].log())
		s.relabel("e", "z")
		synctest.Wait()
		requireSame(t, "after RemoveEventHandler", ours, theirs)
		require.Len(t, ours.recs[1].log(), before)

		stop()
		requireSame(t, "stopped", ours, theirs)
		require.True(t, ours.inf.IsStopped())
		_, err := ours.inf.AddEventHandler(&recorder{})
		_, errT := theirs.inf.AddEventHandler(&recorder{})
		require.Error(t, errT)
		require.Error(t, err)
		require.Equal(t, errT.Error(), err.Error(), "the error names the user's handler, as client-go's does")
	})
}

// TestRegistrationCheckerIsNamedAsClientGos: a registration's checker is
// named as client-go's ("<informer's checker> + event handler <handler>"),
// for a handler type and for functions, the second handler of a type
// included: the index informer.listener carries (#1) is not part of it.
func TestRegistrationCheckerIsNamedAsClientGos(t *testing.T) {
	s := newServer(t)
	ours := dropin.NewSharedIndexInformer(inProcessLW(s.srv), &corev1.Pod{}, 0, nil)
	theirs := cache.NewSharedIndexInformer(inProcessLW(s.srv), &corev1.Pod{}, 0, nil)
	require.Equal(t, theirs.HasSyncedChecker().Name(), ours.HasSyncedChecker().Name(), "the informer's checker")
	for _, h := range []cache.ResourceEventHandler{&recorder{}, &recorder{}, cache.ResourceEventHandlerFuncs{AddFunc: func(any) {}}} {
		regO, err := ours.AddEventHandler(h)
		require.NoError(t, err)
		regT, err := theirs.AddEventHandler(h)
		require.NoError(t, err)
		require.Equal(t, regT.HasSyncedChecker().Name(), regO.HasSyncedChecker().Name(), "%T's registration", h)
	}
}

// TestRegistrationCheckerClosesAfterTheInitialAddsReturned: a handler's
// checker is done only once its own initial-list calls have returned, not
// when the informer has synced.
func TestRegistrationCheckerClosesAfterTheInitialAddsReturned(t *testing.T) {
	s := newServer(t, "a", "b")
	synctest.Test(t, func(t *testing.T) {
		for _, mk := range []func() cache.SharedIndexInformer{
			func() cache.SharedIndexInformer {
				return dropin.NewSharedIndexInformer(inProcessLW(s.srv), &corev1.Pod{}, 0, nil)
			},
			func() cache.SharedIndexInformer {
				return cache.NewSharedIndexInformer(inProcessLW(s.srv), &corev1.Pod{}, 0, nil)
			},
		} {
			inf := mk()
			release := make(chan struct{})
			slow, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) { <-release }})
			require.NoError(t, err)
			fast, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{})
			require.NoError(t, err)
			stop := run(t, &side{inf: inf})
			synctest.Wait()
			name := fmt.Sprintf("%T", inf)
			require.True(t, inf.HasSynced(), name)
			require.True(t, isClosed(fast.HasSyncedChecker().Done()), name)
			require.False(t, isClosed(slow.HasSyncedChecker().Done()), "%s: a handler still in its first OnAdd has not synced", name)
			require.False(t, slow.HasSynced(), name)
			require.NotEmpty(t, slow.HasSyncedChecker().Name(), name)
			close(release)
			synctest.Wait()
			require.True(t, isClosed(slow.HasSyncedChecker().Done()), name)
			require.True(t, slow.HasSynced(), name)

			ctx, cancel := context.WithCancel(context.Background())
			require.True(t, cache.WaitFor(ctx, "sync", inf.HasSyncedChecker(), slow.HasSyncedChecker()), name)
			cancel()
			stop()
		}
	})
}

// TestShutDownEventHandlerWaitsForTheRunningCall: client-go's own
// ShutDownEventHandler works on our handles: it returns only when the
// handler's call in progress has returned.
func TestShutDownEventHandlerWaitsForTheRunningCall(t *testing.T) {
	s := newServer(t, "a")
	synctest.Test(t, func(t *testing.T) {
		s.t = t
		ours, theirs := pair(t, s, 1)
		run(t, ours, theirs)
		synctest.Wait()
		for _, sd := range []*side{ours, theirs} {
			sd.recs[0].mu.Lock()
			sd.recs[0].block = make(chan struct{})
			sd.recs[0].mu.Unlock()
		}
		s.relabel("a", "x")
		synctest.Wait() // both handlers are now inside OnUpdate

		for _, sd := range []*side{ours, theirs} {
			done := make(chan error, 1)
			go func() { done <- cache.ShutDownEventHandler(sd.inf, sd.regs[0]) }()
			synctest.Wait()
			select {
			case err := <-done:
				t.Fatalf("%s: ShutDownEventHandler returned (%v) while the handler was still running", sd.name, err)
			default:
			}
			close(sd.recs[0].block)
			synctest.Wait()
			require.NoError(t, <-done, sd.name)
		}
		requireSame(t, "after shutdown", ours, theirs)
	})
}

// TestIndexersAndTransform: indexes given at construction and added after
// Run answer alike, and a transform shapes what both cache.
func TestIndexersAndTransform(t *testing.T) {
	s := newServer(t, "a", "b", "c")
	byApp := func(obj any) ([]string, error) { return []string{obj.(*corev1.Pod).Labels["app"]}, nil }
	byName := func(obj any) ([]string, error) { return []string{obj.(*corev1.Pod).Name}, nil }
	strip := func(obj any) (any, error) {
		p := obj.(*corev1.Pod).DeepCopy()
		p.Annotations = map[string]string{"transformed": "yes"}
		return p, nil
	}
	synctest.Test(t, func(t *testing.T) {
		s.t = t
		ours := &side{name: "dropin", inf: dropin.NewSharedIndexInformerWithOptions(inProcessLW(s.srv), &corev1.Pod{},
			cache.SharedIndexInformerOptions{Indexers: cache.Indexers{"app": byApp}})}
		theirs := &side{name: "client-go", inf: cache.NewSharedIndexInformerWithOptions(inProcessLW(s.srv), &corev1.Pod{},
			cache.SharedIndexInformerOptions{Indexers: cache.Indexers{"app": byApp}})}
		for _, sd := range []*side{ours, theirs} {
			require.NoError(t, sd.inf.SetTransform(strip))
			sd.add(t, &recorder{})
		}
		run(t, ours, theirs)
		synctest.Wait()
		s.relabel("b", "b")
		synctest.Wait()
		for _, sd := range []*side{ours, theirs} {
			require.Error(t, sd.inf.SetTransform(strip), "%s: SetTransform after Run", sd.name)
			require.NoError(t, sd.inf.AddIndexers(cache.Indexers{"name": byName}), sd.name)
			require.Error(t, sd.inf.AddIndexers(cache.Indexers{"name": byName}), "%s: an index that exists", sd.name)
		}
		requireSame(t, "indexed", ours, theirs)

		o, th := ours.inf.GetIndexer(), theirs.inf.GetIndexer()
		require.ElementsMatch(t, keys(th.GetIndexers()), keys(o.GetIndexers()))
		for _, index := range []string{"app", "name"} {
			require.ElementsMatch(t, th.ListIndexFuncValues(index), o.ListIndexFuncValues(index), index)
			for _, v := range th.ListIndexFuncValues(index) {
				wantK, err := th.IndexKeys(index, v)
				require.NoError(t, err)
				gotK, err := o.IndexKeys(index, v)
				require.NoError(t, err)
				require.ElementsMatch(t, wantK, gotK, "%s=%s", index, v)
				wantO, _ := th.ByIndex(index, v)
				gotO, _ := o.ByIndex(index, v)
				require.Equal(t, cacheState(wantO), cacheState(gotO))
			}
		}
		probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", Labels: map[string]string{"app": "a"}}}
		wantI, _ := th.Index("app", probe)
		gotI, _ := o.Index("app", probe)
		require.Equal(t, cacheState(wantI), cacheState(gotI))
		_, err := o.ByIndex("nope", "x")
		require.Error(t, err)

		got, exists, err := o.GetByKey("ns/a")
		require.NoError(t, err)
		require.True(t, exists)
		require.Equal(t, "yes", got.(*corev1.Pod).Annotations["transformed"])

		// client-go's tombstone reaches the object under its key.
		tomb := cache.DeletedFinalStateUnknown{Key: "ns/c", Obj: got}
		_, exists, err = o.Get(tomb)
		require.NoError(t, err)
		require.True(t, exists)
		require.NoError(t, o.Delete(tomb))
		require.NoError(t, th.Delete(tomb))
		require.ElementsMatch(t, th.ListKeys(), o.ListKeys())
	})
}

func keys(m cache.Indexers) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestWatchErrorHandlersGetAClientGoReflector: both watch error handlers
// are called with a client-go Reflector and the server's error.
func TestWatchErrorHandlersGetAClientGoReflector(t *testing.T) {
	so, st := newServer(t, "a"), newServer(t, "a")
	synctest.Test(t, func(t *testing.T) {
		type call struct {
			desc      string
			forbidden bool
		}
		var mu sync.Mutex
		got := map[string][]call{}
		ours, _ := pair(t, so, 1)
		_, theirs := pair(t, st, 1)
		for _, sd := range []*side{ours, theirs} {
			require.NoError(t, sd.inf.SetWatchErrorHandler(func(r *cache.Reflector, err error) {
				mu.Lock()
				defer mu.Unlock()
				got[sd.name] = append(got[sd.name], call{r.TypeDescription(), apierrors.IsForbidden(err)})
			}))
		}
		// The first watch is the stream: its 403 makes both fall back to a
		// LIST without telling the handler; the second, plain WATCH's 403
		// reaches it.
		for _, s := range []server{so, st} {
			s.srv.Inject(apiserver.Fault{Verb: "watch", Status: 403, Count: 2})
		}
		run(t, ours, theirs)
		synctest.Wait()
		time.Sleep(time.Minute)
		synctest.Wait()
		mu.Lock()
		require.Len(t, got["client-go"], 1)
		require.Equal(t, got["client-go"], got["dropin"])
		require.True(t, got["dropin"][0].forbidden)
		mu.Unlock()
		requireSame(t, "after the 403s", ours, theirs)
	})
}

// TestWatchErrorHandlerWithContext is the same with the context variant,
// set before Run, refused after.
func TestWatchErrorHandlerWithContext(t *testing.T) {
	so, st := newServer(t, "a"), newServer(t, "a")
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		got := map[string]int{}
		ours, _ := pair(t, so, 0)
		_, theirs := pair(t, st, 0)
		for _, sd := range []*side{ours, theirs} {
			require.NoError(t, sd.inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
				require.NotNil(t, ctx)
				require.NotNil(t, r)
				mu.Lock()
				defer mu.Unlock()
				if apierrors.IsForbidden(err) {
					got[sd.name]++
				}
			}))
		}
		for _, s := range []server{so, st} {
			s.srv.Inject(apiserver.Fault{Verb: "watch", Status: 403, Count: 3})
		}
		run(t, ours, theirs)
		synctest.Wait()
		time.Sleep(time.Minute)
		synctest.Wait()
		mu.Lock()
		require.Positive(t, got["client-go"])
		require.Equal(t, got["client-go"], got["dropin"])
		require.Positive(t, got["dropin"])
		mu.Unlock()
		for _, sd := range []*side{ours, theirs} {
			require.Error(t, sd.inf.SetWatchErrorHandlerWithContext(func(context.Context, *cache.Reflector, error) {}), sd.name)
		}
	})
}

// TestHandlerOptionsResyncPeriod: a handler given its own resync period in
// HandlerOptions is resynced on it, as client-go's.
func TestHandlerOptionsResyncPeriod(t *testing.T) {
	s := newServer(t, "a", "b")
	synctest.Test(t, func(t *testing.T) {
		s.t = t
		ours := &side{name: "dropin", inf: dropin.NewSharedInformer(inProcessLW(s.srv), &corev1.Pod{}, time.Minute).(cache.SharedIndexInformer)}
		theirs := &side{name: "client-go", inf: cache.NewSharedIndexInformer(inProcessLW(s.srv), &corev1.Pod{}, time.Minute, nil)}
		period := 10 * time.Second
		for _, sd := range []*side{ours, theirs} {
			r := &recorder{}
			reg, err := sd.inf.AddEventHandlerWithOptions(r, cache.HandlerOptions{ResyncPeriod: &period})
			require.NoError(t, err)
			sd.recs, sd.regs = append(sd.recs, r), append(sd.regs, reg)
			sd.add(t, &recorder{}) // the informer's default: a minute
		}
		run(t, ours, theirs)
		synctest.Wait()
		time.Sleep(25 * time.Second)
		synctest.Wait()
		requireSame(t, "after two resyncs", ours, theirs)
		require.Greater(t, len(ours.recs[0].log()), len(ours.recs[1].log()), "the resynced handler got the resync updates")
	})
}

// TestAddIndexersWithNilIndexers: client-go's informer built with nil
// Indexers panics on a later AddIndexers (it writes into the nil map); ours
// starts from an empty set and adds.
func TestAddIndexersWithNilIndexers(t *testing.T) {
	s := newServer(t)
	byApp := cache.Indexers{"app": func(obj any) ([]string, error) { return []string{obj.(*corev1.Pod).Labels["app"]}, nil }}
	require.Panics(t, func() {
		_ = cache.NewSharedIndexInformer(inProcessLW(s.srv), &corev1.Pod{}, 0, nil).AddIndexers(byApp)
	}, "client-go's behaviour this test documents")
	inf := dropin.NewSharedIndexInformer(inProcessLW(s.srv), &corev1.Pod{}, 0, nil)
	require.NoError(t, inf.AddIndexers(byApp))
	require.Contains(t, inf.GetIndexer().GetIndexers(), "app")
}
