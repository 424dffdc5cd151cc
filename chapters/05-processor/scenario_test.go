package processor

// Scenario tests against client-go: its SharedIndexInformer (on its default
// RealFIFO, what a user gets today) and ours (on our default, the RealFIFO
// configured as v0.37.2 does) are driven by one script, and every handler of
// ours must receive exactly the calls its counterpart in client-go receives:
// same calls, same order, same objects, same isInInitialList. The one
// allowance: a run of tombstone deletes from a relist is compared as a set,
// because client-go emits those in its cache's map order (see normalized).

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	kcache "k8s.io/client-go/tools/cache"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/kube"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// recorder is a handler that logs its calls and rebuilds state from them.
type recorder struct {
	mu                sync.Mutex
	calls             []string
	state             map[string]string // key -> rv
	lastRV            map[string]int
	rvOrderViolations []string
}

func newRecorder() *recorder {
	return &recorder{state: map[string]string{}, lastRV: map[string]int{}}
}

func podOf(obj any) (key, rv string, tombstone bool) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return o.Namespace + "/" + o.Name, o.ResourceVersion, false
	case deltafifo.DeletedFinalStateUnknown:
		return o.Key, "", true
	case kcache.DeletedFinalStateUnknown:
		return o.Key, "", true
	}
	panic(fmt.Sprintf("unexpected %T", obj))
}

// tombstoneOf describes what a tombstone holds: the last state the cache
// had, which the handler gets to clean up with.
func tombstoneOf(obj any) string {
	var inner any
	switch o := obj.(type) {
	case deltafifo.DeletedFinalStateUnknown:
		inner = o.Obj
	case kcache.DeletedFinalStateUnknown:
		inner = o.Obj
	}
	if p, ok := inner.(*corev1.Pod); ok {
		return p.Namespace + "/" + p.Name + "@" + p.ResourceVersion
	}
	return fmt.Sprintf("%T", inner)
}

func (r *recorder) seen(key, rv string) {
	n, _ := strconv.Atoi(rv)
	if n < r.lastRV[key] {
		r.rvOrderViolations = append(r.rvOrderViolations, fmt.Sprintf("%s: rv %d after %d", key, n, r.lastRV[key]))
	}
	r.lastRV[key] = n
}

func (r *recorder) OnAdd(obj any, initial bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key, rv, _ := podOf(obj)
	r.seen(key, rv)
	r.state[key] = rv
	r.calls = append(r.calls, fmt.Sprintf("add %s@%s initial=%v", key, rv, initial))
}

func (r *recorder) OnUpdate(old, obj any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key, rv, _ := podOf(obj)
	_, oldRV, _ := podOf(old)
	r.seen(key, rv)
	r.state[key] = rv
	r.calls = append(r.calls, fmt.Sprintf("update %s@%s->%s", key, oldRV, rv))
}

func (r *recorder) OnDelete(obj any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key, rv, tomb := podOf(obj)
	delete(r.state, key)
	if tomb {
		r.calls = append(r.calls, "delete-tombstone "+key+" of "+tombstoneOf(obj))
	} else {
		r.calls = append(r.calls, fmt.Sprintf("delete %s@%s", key, rv))
	}
}

func (r *recorder) snapshot() ([]string, map[string]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := make(map[string]string, len(r.state))
	for k, v := range r.state {
		st[k] = v
	}
	return slices.Clone(r.calls), st
}

func (r *recorder) log() []string {
	calls, _ := r.snapshot()
	return calls
}

func cacheState(objs []any) map[string]string {
	out := map[string]string{}
	for _, o := range objs {
		k, rv, _ := podOf(o)
		out[k] = rv
	}
	return out
}

// normalized sorts every run of consecutive tombstone deletes: a relist's
// tombstones come in client-go's cache map order (processReplacedAllInfo
// ranges over a map), in key order in ours. Everything else keeps its
// order.
func normalized(calls []string) []string {
	return testutil.SortRuns(calls, func(call string) bool { return strings.HasPrefix(call, "delete-tombstone ") })
}

// sideBySide is ours and client-go's shared informer, each with the same
// handlers: ours[i] is the counterpart of theirs[i].
type sideBySide struct {
	ours, theirs []*recorder
	oursInf      SharedIndexInformer
	theirsInf    kcache.SharedIndexInformer
	// late is the index of the handler added after the start (-1: none),
	// lateSynthetic how many of its first calls are the synthetic adds.
	late, lateSynthetic int
}

// startSideBySide starts, in the calling synctest bubble, our informer on
// ours and client-go's on theirs, with handlers handlers each.
func startSideBySide(t *testing.T, ours reflector.ListerWatcher, theirs kcache.ListerWatcher, handlers int) *sideBySide {
	p := &sideBySide{late: -1,
		oursInf:   NewSharedIndexInformer(ours, &corev1.Pod{}, 0, nil),
		theirsInf: kcache.NewSharedIndexInformer(theirs, &corev1.Pod{}, 0, kcache.Indexers{}),
	}
	for range handlers {
		p.addHandlers(t)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { p.oursInf.RunWithContext(ctx) })
	wg.Go(func() { p.theirsInf.RunWithContext(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return p
}

func (p *sideBySide) addHandlers(t *testing.T) {
	o, th := newRecorder(), newRecorder()
	_, err := p.oursInf.AddEventHandler(o)
	require.NoError(t, err)
	_, err = p.theirsInf.AddEventHandler(th)
	require.NoError(t, err)
	p.ours, p.theirs = append(p.ours, o), append(p.theirs, th)
}

// addLate adds one more handler to each informer while they run; call it
// with both idle (after synctest.Wait).
func (p *sideBySide) addLate(t *testing.T) {
	p.late, p.lateSynthetic = len(p.ours), len(p.oursInf.GetStore().List())
	p.addHandlers(t)
	synctest.Wait()
}

// requireSame requires each of our handlers' calls to equal its client-go
// counterpart's (after normalized), and the caches and last synced
// resourceVersions to be the same.
func (p *sideBySide) requireSame(t *testing.T, step string) {
	t.Helper()
	for i := range p.ours {
		want, got := p.theirs[i].log(), p.ours[i].log()
		if i == p.late {
			// A late handler's synthetic adds are the cache's List(), in
			// map order on both sides; after them, the queue's order.
			require.GreaterOrEqual(t, len(got), p.lateSynthetic, "%s: late handler's synthetic adds", step)
			require.GreaterOrEqual(t, len(want), p.lateSynthetic, "%s: client-go's late handler's synthetic adds", step)
			require.ElementsMatch(t, want[:p.lateSynthetic], got[:p.lateSynthetic], "%s: late handler's synthetic adds", step)
			for _, c := range got[:p.lateSynthetic] {
				require.True(t, strings.HasPrefix(c, "add ") && strings.HasSuffix(c, " initial=true"), "%s: synthetic add %q", step, c)
			}
			want, got = want[p.lateSynthetic:], got[p.lateSynthetic:]
		}
		require.Equal(t, normalized(want), normalized(got), "%s: handler %d's calls differ from client-go's", step, i)
	}
	require.Equal(t, cacheState(p.theirsInf.GetStore().List()), cacheState(p.oursInf.GetStore().List()), "%s: cache", step)
	require.Equal(t, p.theirsInf.LastSyncResourceVersion(), p.oursInf.LastSyncResourceVersion(), "%s: last synced resourceVersion", step)
}

// scenarioBackend is what the scenario writes through: a scripted
// ListerWatcher or the embedded API server.
type scenarioBackend interface {
	create(t *testing.T, name string)
	relabel(t *testing.T, name, v string)
	remove(t *testing.T, name string)
	bookmark()
	// relist breaks every watch so that the changes made by during are
	// never seen as watch events and each informer gets a 410 (expired)
	// and relists. The caller then waits out the relist backoff.
	relist(t *testing.T, during func())
}

// runScenario is the script: initial list, watch events (updates, deletes,
// an object created, changed and deleted), a burst, a bookmark, a 410 and
// a relist that removes, adds and changes objects, a late handler, and
// more events. After every step the two sides must agree exactly.
func runScenario(t *testing.T, b scenarioBackend, p *sideBySide) {
	synctest.Wait()
	require.True(t, p.oursInf.HasSynced())
	p.requireSame(t, "initial list")
	initial := p.ours[0].log()
	require.Len(t, initial, 6)
	for _, c := range initial {
		require.True(t, strings.HasSuffix(c, "initial=true"), c)
	}

	b.relabel(t, "a", "1")
	b.remove(t, "b")
	b.create(t, "g")
	b.relabel(t, "g", "1")
	b.remove(t, "g")
	b.relabel(t, "c", "1")
	b.relabel(t, "c", "2")
	synctest.Wait()
	p.requireSame(t, "watch events")

	// A burst, with keys repeated: on the RealFIFO every event is its own
	// entry and comes out in order; a DeltaFIFO would have merged them.
	for i := range 40 {
		b.create(t, fmt.Sprintf("q%02d", i))
		if i%3 == 0 {
			b.relabel(t, fmt.Sprintf("q%02d", i/2), "1")
		}
	}
	synctest.Wait()
	p.requireSame(t, "burst")

	b.bookmark()
	synctest.Wait()
	p.requireSame(t, "bookmark")

	before := len(p.ours[0].log())
	b.relist(t, func() {
		b.remove(t, "c")
		b.remove(t, "d")
		b.remove(t, "q07")
		b.create(t, "h")
		b.relabel(t, "e", "1")
		b.relabel(t, "a", "2")
	})
	synctest.Wait()
	time.Sleep(time.Minute) // past both reflectors' relist backoff
	synctest.Wait()
	p.requireSame(t, "relist")
	relisted := p.ours[0].log()[before:]
	tombstones := slices.DeleteFunc(slices.Clone(relisted), func(c string) bool { return !strings.HasPrefix(c, "delete-tombstone ") })
	require.Len(t, tombstones, 3, "the relist's removals are tombstones: %v", relisted)
	require.True(t, slices.ContainsFunc(relisted, func(c string) bool { return strings.HasPrefix(c, "add ns/h@") && strings.HasSuffix(c, "initial=false") }),
		"the relist's addition: %v", relisted)
	require.True(t, slices.ContainsFunc(relisted, func(c string) bool { return strings.HasPrefix(c, "update ns/e@") }), "the relist's change: %v", relisted)

	p.addLate(t)
	p.requireSame(t, "late handler")

	b.relabel(t, "h", "1")
	b.remove(t, "e")
	b.create(t, "i")
	b.relabel(t, "a", "3")
	synctest.Wait()
	p.requireSame(t, "after relist")

	for i, r := range p.ours {
		assert.Empty(t, r.rvOrderViolations, "handler %d: per object, calls in resourceVersion order", i)
	}
}

// scriptedAPI is a scripted LIST/WATCH source: a set of pods with a
// resourceVersion counter, a LIST that returns them in key order, and
// watches that get every later change (unless made silently).
type scriptedAPI struct {
	mu      sync.Mutex
	rv      int
	pods    map[string]*corev1.Pod
	watches []*scriptWatch
	silent  bool
}

type scriptWatch struct {
	ch      chan watch.Event
	stopped chan struct{}
	once    sync.Once
}

func (w *scriptWatch) ResultChan() <-chan watch.Event { return w.ch }
func (w *scriptWatch) Stop()                          { w.once.Do(func() { close(w.stopped) }) }

// scriptLW is one informer's ListerWatcher on a scriptedAPI; it serves
// both libraries' interfaces.
type scriptLW struct{ api *scriptedAPI }

// IsWatchListSemanticsUnSupported makes client-go's reflector LIST, as
// ours does, instead of streaming the initial list (WatchListClient).
func (scriptLW) IsWatchListSemanticsUnSupported() bool { return true }

func (l scriptLW) List(metav1.ListOptions) (runtime.Object, error) {
	a := l.api
	a.mu.Lock()
	defer a.mu.Unlock()
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(a.rv)}}
	for _, key := range slices.Sorted(func(yield func(string) bool) {
		for k := range a.pods {
			if !yield(k) {
				return
			}
		}
	}) {
		list.Items = append(list.Items, *a.pods[key].DeepCopy())
	}
	return list, nil
}

func (l scriptLW) Watch(o metav1.ListOptions) (watch.Interface, error) {
	if o.SendInitialEvents != nil && *o.SendInitialEvents {
		return nil, apierrors.NewBadRequest("this script serves no watch-list (sendInitialEvents)")
	}
	w := &scriptWatch{ch: make(chan watch.Event, 1000), stopped: make(chan struct{})}
	l.api.mu.Lock()
	l.api.watches = append(l.api.watches, w)
	l.api.mu.Unlock()
	return w, nil
}

func (a *scriptedAPI) emit_locked(ev watch.Event) {
	if a.silent {
		return
	}
	for _, w := range a.watches {
		select {
		case <-w.stopped:
		default:
			ev := ev
			ev.Object = ev.Object.DeepCopyObject()
			w.ch <- ev
		}
	}
}

func (a *scriptedAPI) write(typ watch.EventType, name string, change func(*corev1.Pod)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rv++
	key := "ns/" + name
	p := a.pods[key]
	if p == nil {
		p = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	} else {
		p = p.DeepCopy()
	}
	change(p)
	p.ResourceVersion = strconv.Itoa(a.rv)
	if typ == watch.Deleted {
		delete(a.pods, key)
	} else {
		a.pods[key] = p
	}
	a.emit_locked(watch.Event{Type: typ, Object: p})
}

func (a *scriptedAPI) create(_ *testing.T, name string) {
	a.write(watch.Added, name, func(*corev1.Pod) {})
}
func (a *scriptedAPI) remove(_ *testing.T, name string) {
	a.write(watch.Deleted, name, func(*corev1.Pod) {})
}
func (a *scriptedAPI) relabel(_ *testing.T, name, v string) {
	a.write(watch.Modified, name, func(p *corev1.Pod) { p.Labels = map[string]string{"v": v} })
}

func (a *scriptedAPI) bookmark() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.emit_locked(watch.Event{Type: watch.Bookmark, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.Itoa(a.rv)}}})
}

func (a *scriptedAPI) relist(_ *testing.T, during func()) {
	a.mu.Lock()
	a.silent = true
	a.mu.Unlock()
	during()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.silent = false
	gone := apierrors.NewResourceExpired("the watch's resourceVersion is too old (scripted)").ErrStatus
	for _, w := range a.watches {
		select {
		case <-w.stopped:
		default:
			w.ch <- watch.Event{Type: watch.Error, Object: gone.DeepCopy()}
		}
	}
	a.watches = nil
}

// TestScriptedScenarioMatchesClientGo runs the scenario on a scripted
// ListerWatcher (one per informer, same script): ours on its default queue
// against client-go's SharedIndexInformer on its default.
func TestScriptedScenarioMatchesClientGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := &scriptedAPI{pods: map[string]*corev1.Pod{}}
		for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
			api.create(t, n)
		}
		p := startSideBySide(t, scriptLW{api}, scriptLW{api}, 2)
		runScenario(t, api, p)
	})
}

// serverBackend drives the embedded API server.
type serverBackend struct {
	srv *apiserver.Server
}

func (b serverBackend) create(t *testing.T, name string) {
	_, err := b.srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}})
	require.NoError(t, err)
}

func (b serverBackend) remove(t *testing.T, name string) {
	require.NoError(t, b.srv.Delete(apiserver.Pods, "ns", name))
}

func (b serverBackend) relabel(t *testing.T, name, v string) {
	obj, err := b.srv.Get(apiserver.Pods, "ns", name)
	require.NoError(t, err)
	p := obj.(*corev1.Pod).DeepCopy()
	p.Labels = map[string]string{"v": v}
	_, err = b.srv.Update(p)
	require.NoError(t, err)
}

func (b serverBackend) bookmark() { b.srv.SendBookmarks() }

func (b serverBackend) relist(t *testing.T, during func()) {
	// Both reconnects are held while the changes are made, then history
	// is compacted: each reconnect gets 410 and its informer relists.
	stalls := []func(){b.srv.StallNext("watch"), b.srv.StallNext("watch")}
	b.srv.CloseWatches()
	synctest.Wait()
	during()
	b.srv.Compact()
	for _, release := range stalls {
		release()
	}
}

// inProcessLW is the embedded server's pod ListerWatcher, without HTTP, so the
// informers can run in a synctest bubble; it serves both libraries, and
// refuses watch-list as scriptLW does.
type inProcessLW struct{ *apiserver.ListerWatcher }

func (inProcessLW) IsWatchListSemanticsUnSupported() bool { return true }

func newInProcessLW(srv *apiserver.Server) inProcessLW {
	return inProcessLW{srv.ListerWatcher(apiserver.Pods, metav1.NamespaceAll)}
}

// TestEmbeddedServerScenarioMatchesClientGo runs the same scenario against
// the embedded API server.
func TestEmbeddedServerScenarioMatchesClientGo(t *testing.T) {
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	b := serverBackend{srv}
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		b.create(t, n)
	}
	synctest.Test(t, func(t *testing.T) {
		p := startSideBySide(t, newInProcessLW(srv), newInProcessLW(srv), 2)
		runScenario(t, b, p)
	})
}

// theirHTTPLW is client-go's ListWatch over HTTP, refusing watch-list so
// that client-go LISTs as ours does.
type theirHTTPLW struct{ *kcache.ListWatch }

func (theirHTTPLW) IsWatchListSemanticsUnSupported() bool { return true }

type pair struct {
	ours, theirs *recorder
	oursInf      SharedIndexInformer
	theirsInf    kcache.SharedIndexInformer
	oursReg      ResourceEventHandlerRegistration
	theirsRegK   kcache.ResourceEventHandlerRegistration
}

// startPair starts ours and client-go's informer on srv over HTTP (the
// REST client), a handler each.
func startPair(t *testing.T, srv *apiserver.Server, resync time.Duration) *pair {
	t.Helper()
	client, err := kube.RESTClientFor(srv.Config(), corev1.SchemeGroupVersion)
	require.NoError(t, err)
	p := &pair{ours: newRecorder(), theirs: newRecorder()}
	p.oursInf = NewSharedIndexInformer(reflector.NewListWatchFromClient(client, "pods", metav1.NamespaceAll, fields.Everything()),
		&corev1.Pod{}, resync, nil)
	p.theirsInf = kcache.NewSharedIndexInformer(theirHTTPLW{kcache.NewListWatchFromClient(client, "pods", metav1.NamespaceAll, fields.Everything())},
		&corev1.Pod{}, resync, kcache.Indexers{})
	p.oursReg, err = p.oursInf.AddEventHandler(p.ours)
	require.NoError(t, err)
	p.theirsRegK, err = p.theirsInf.AddEventHandler(p.theirs)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { p.oursInf.RunWithContext(ctx) })
	wg.Go(func() { p.theirsInf.RunWithContext(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	require.True(t, WaitForCacheSync(ctx.Done(), p.oursInf.HasSynced, p.oursReg.HasSynced))
	require.True(t, kcache.WaitForCacheSync(ctx.Done(), p.theirsInf.HasSynced, p.theirsRegK.HasSynced))
	return p
}

// settled waits until both handlers' rebuilt states equal their caches and
// the caches equal want, then requires the two call logs to be equal.
func (p *pair) settled(t *testing.T, what string, want map[string]string) {
	t.Helper()
	testutil.Eventually(t, what, func() bool {
		_, o := p.ours.snapshot()
		_, th := p.theirs.snapshot()
		return assert.ObjectsAreEqual(want, o) && assert.ObjectsAreEqual(want, th) &&
			assert.ObjectsAreEqual(want, cacheState(p.oursInf.GetStore().List())) &&
			assert.ObjectsAreEqual(want, cacheState(p.theirsInf.GetStore().List()))
	})
	require.Equal(t, normalized(p.theirs.log()), normalized(p.ours.log()), "%s: handler calls", what)
}

// TestScenarioOverHTTPAgainstClientGo is the scenario's short form over
// real HTTP (the REST client and the embedded server's watch streams),
// where steps cannot be made idle as in a bubble, so each step waits until
// both sides reach the expected state; then the call logs must be equal.
// It also covers a filtering handler.
func TestScenarioOverHTTPAgainstClientGo(t *testing.T) {
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	want := map[string]string{}
	create := func(name string) *corev1.Pod {
		obj, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}})
		require.NoError(t, err)
		p := obj.(*corev1.Pod)
		want["ns/"+name] = p.ResourceVersion
		return p
	}
	update := func(p *corev1.Pod, labels map[string]string) *corev1.Pod {
		u := p.DeepCopy()
		u.Labels = labels
		obj, err := srv.Update(u)
		require.NoError(t, err)
		p = obj.(*corev1.Pod)
		want[p.Namespace+"/"+p.Name] = p.ResourceVersion
		return p
	}
	pods := map[string]*corev1.Pod{}
	for _, n := range []string{"a", "b", "c", "d"} {
		pods[n] = create(n)
	}

	p := startPair(t, srv, 0)
	p.settled(t, "initial list", want)
	for _, c := range p.ours.log() {
		assert.Contains(t, c, "initial=true")
	}

	pods["e"] = create("e")
	pods["a"] = update(pods["a"], map[string]string{"v": "2"})
	pods["a"] = update(pods["a"], map[string]string{"v": "2", "w": "1"})
	require.NoError(t, srv.Delete(apiserver.Pods, "ns", "b"))
	delete(want, "ns/b")
	p.settled(t, "watch events", want)

	// A watch drop and a relist that removes objects: the deletes are only
	// discovered by the relist.
	srv.Stop()
	require.NoError(t, srv.Delete(apiserver.Pods, "ns", "c"))
	require.NoError(t, srv.Delete(apiserver.Pods, "ns", "d"))
	delete(want, "ns/c")
	delete(want, "ns/d")
	pods["f"] = create("f")
	srv.Compact()
	require.NoError(t, srv.Restart())
	p.settled(t, "after relist", want)
	calls := p.ours.log()
	assert.ElementsMatch(t, []string{"delete-tombstone ns/c of ns/c@" + pods["c"].ResourceVersion, "delete-tombstone ns/d of ns/d@" + pods["d"].ResourceVersion},
		slices.DeleteFunc(slices.Clone(calls), func(c string) bool { return !strings.HasPrefix(c, "delete-tombstone ") }))

	// A filtering handler sees only what passes, with crossings translated.
	filtered := newRecorder()
	_, err = p.oursInf.AddEventHandler(FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool { po, ok := obj.(*corev1.Pod); return ok && po.Labels["v"] == "2" },
		Handler:    filtered,
	})
	require.NoError(t, err)
	testutil.Eventually(t, "filtered sees a", func() bool { _, st := filtered.snapshot(); return len(st) == 1 })
	pods["a"] = update(pods["a"], nil)
	testutil.Eventually(t, "filtered sees a leave", func() bool { _, st := filtered.snapshot(); return len(st) == 0 })
	p.settled(t, "a relabelled", want)

	for _, r := range []*recorder{p.ours, p.theirs} {
		assert.Empty(t, r.rvOrderViolations, "per object, calls in resourceVersion order")
	}
}

// A resync reaches only the handlers due for one, ours as client-go's: in
// fake time (synctest), three resync periods pass, the handler with the
// informer's period gets a same-resourceVersion update each time it is
// due, and the one that asked for none gets nothing, exactly.
func TestResyncDeliversSameRVUpdatesOnlyToDueHandlers(t *testing.T) {
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	_, _ = srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}})
	synctest.Test(t, func(t *testing.T) {
		ours := NewSharedIndexInformer(newInProcessLW(srv), &corev1.Pod{}, time.Second, nil)
		theirs := kcache.NewSharedIndexInformer(newInProcessLW(srv), &corev1.Pod{}, time.Second, kcache.Indexers{})
		due, theirDue, quiet := newRecorder(), newRecorder(), newRecorder()
		_, err := ours.AddEventHandler(due)
		require.NoError(t, err)
		_, err = ours.AddEventHandlerWithResyncPeriod(quiet, 0)
		require.NoError(t, err)
		_, err = theirs.AddEventHandler(theirDue)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { ours.RunWithContext(ctx) })
		wg.Go(func() { theirs.RunWithContext(ctx) })
		synctest.Wait()
		require.True(t, ours.HasSynced())

		time.Sleep(3*time.Second + 500*time.Millisecond)
		synctest.Wait()
		resyncs := func(r *recorder) int {
			calls, _ := r.snapshot()
			n := 0
			for _, c := range calls {
				if c == "update ns/a@2->2" {
					n++
				}
			}
			return n
		}
		assert.Equal(t, 3, resyncs(due), "the handler with the informer's period, once a period")
		assert.Equal(t, resyncs(theirDue), resyncs(due), "as often as client-go's")
		assert.Zero(t, resyncs(quiet), "a handler with resync period 0 gets no resync updates")
		cancel()
		wg.Wait()
	})
}
