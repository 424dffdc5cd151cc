package processor

// Scenario tests against client-go: its SharedIndexInformer (on its default
// RealFIFO, what a user gets today) and ours run side by side against one
// embedded API server and are driven by the same script.
//
// Our informer follows the DeltaFIFO path, which may coalesce a key's
// changes where the RealFIFO would not, so the comparison is of outcomes:
// the final cache; each handler's rebuilt state equals its informer's cache;
// per object, calls in resourceVersion order; the same keys deleted by a
// relist; the same initial-list flags; and, where events are fed one at a
// time so nothing can coalesce, the identical call sequence.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	kcache "k8s.io/client-go/tools/cache"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/kube"
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
		r.calls = append(r.calls, "delete-tombstone "+key)
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

func cacheState(objs []any) map[string]string {
	out := map[string]string{}
	for _, o := range objs {
		k, rv, _ := podOf(o)
		out[k] = rv
	}
	return out
}

type pair struct {
	ours, theirs       *recorder
	oursInf            SharedIndexInformer
	theirsInf          kcache.SharedIndexInformer
	oursReg, theirsReg ResourceEventHandlerRegistration
	theirsRegK         kcache.ResourceEventHandlerRegistration
}

func startPair(t *testing.T, srv *apiserver.Server, resync time.Duration) *pair {
	t.Helper()
	client, err := kube.RESTClientFor(srv.Config(), corev1.SchemeGroupVersion)
	require.NoError(t, err)
	p := &pair{ours: newRecorder(), theirs: newRecorder()}
	p.oursInf = NewSharedIndexInformer(reflector.NewListWatchFromClient(client, "pods", metav1.NamespaceAll, fields.Everything()),
		&corev1.Pod{}, resync, nil)
	p.theirsInf = kcache.NewSharedIndexInformer(kcache.NewListWatchFromClient(client, "pods", metav1.NamespaceAll, fields.Everything()),
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

func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 20*time.Second, 2*time.Millisecond, what)
}

// settled waits until both handlers' rebuilt states equal their caches and
// the caches equal want.
func (p *pair) settled(t *testing.T, what string, want map[string]string) {
	t.Helper()
	until(t, what, func() bool {
		_, o := p.ours.snapshot()
		_, th := p.theirs.snapshot()
		return assert.ObjectsAreEqual(want, o) && assert.ObjectsAreEqual(want, th) &&
			assert.ObjectsAreEqual(want, cacheState(p.oursInf.GetStore().List())) &&
			assert.ObjectsAreEqual(want, cacheState(p.theirsInf.GetStore().List()))
	})
}

func TestScenarioAgainstClientGoSharedIndexInformer(t *testing.T) {
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
	pods := map[string]*corev1.Pod{}
	for _, n := range []string{"a", "b", "c", "d"} {
		pods[n] = create(n)
	}

	p := startPair(t, srv, 0)
	// Initial list: same adds, all flagged initial, in any order.
	oursCalls, _ := p.ours.snapshot()
	theirsCalls, _ := p.theirs.snapshot()
	assert.ElementsMatch(t, theirsCalls, oursCalls, "initial list")
	for _, c := range oursCalls {
		assert.Contains(t, c, "initial=true")
	}
	p.settled(t, "initial", want)

	// One event at a time: nothing can coalesce, so the sequences must match.
	step := func(what string, do func()) {
		no, _ := p.ours.snapshot()
		nt, _ := p.theirs.snapshot()
		do()
		p.settled(t, what, want)
		o, _ := p.ours.snapshot()
		th, _ := p.theirs.snapshot()
		assert.Equal(t, th[len(nt):], o[len(no):], what)
	}
	step("create e", func() { pods["e"] = create("e") })
	step("update a", func() {
		u := pods["a"].DeepCopy()
		u.Labels = map[string]string{"v": "2"}
		obj, err := srv.Update(u)
		require.NoError(t, err)
		pods["a"] = obj.(*corev1.Pod)
		want["ns/a"] = pods["a"].ResourceVersion
	})
	step("delete b", func() {
		require.NoError(t, srv.Delete(apiserver.Pods, "ns", "b"))
		delete(want, "ns/b")
	})

	// A watch drop and a relist that removes objects: the deletes are only
	// discovered by the relist.
	no, _ := p.ours.snapshot()
	nt, _ := p.theirs.snapshot()
	srv.Stop()
	require.NoError(t, srv.Delete(apiserver.Pods, "ns", "c"))
	require.NoError(t, srv.Delete(apiserver.Pods, "ns", "d"))
	delete(want, "ns/c")
	delete(want, "ns/d")
	pods["f"] = create("f")
	srv.Compact()
	require.NoError(t, srv.Restart())
	p.settled(t, "after relist", want)
	o, _ := p.ours.snapshot()
	th, _ := p.theirs.snapshot()
	deletedBy := func(calls []string) []string {
		var out []string
		for _, c := range calls {
			if len(c) > 7 && c[:7] == "delete-" {
				out = append(out, c)
			}
		}
		slices.Sort(out)
		return out
	}
	assert.Equal(t, []string{"delete-tombstone ns/c", "delete-tombstone ns/d"}, deletedBy(o[len(no):]))
	assert.Equal(t, deletedBy(th[len(nt):]), deletedBy(o[len(no):]), "the same keys reported deleted by the relist")

	// A late handler: synthetic adds of everything cached, flagged initial.
	lateOurs, lateTheirs := newRecorder(), newRecorder()
	reg, err := p.oursInf.AddEventHandler(lateOurs)
	require.NoError(t, err)
	regK, err := p.theirsInf.AddEventHandler(lateTheirs)
	require.NoError(t, err)
	until(t, "late handlers synced", func() bool { return reg.HasSynced() && regK.HasSynced() })
	lo, ls := lateOurs.snapshot()
	lt, _ := lateTheirs.snapshot()
	assert.ElementsMatch(t, lt, lo, "late handler's synthetic adds")
	assert.Equal(t, want, ls)

	// A filtering handler sees only what passes, with crossings translated.
	filtered := newRecorder()
	_, err = p.oursInf.AddEventHandler(FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool { po, ok := obj.(*corev1.Pod); return ok && po.Labels["v"] == "2" },
		Handler:    filtered,
	})
	require.NoError(t, err)
	until(t, "filtered sees a", func() bool { _, st := filtered.snapshot(); return len(st) == 1 })
	u := pods["a"].DeepCopy()
	u.Labels = nil
	_, err = srv.Update(u)
	require.NoError(t, err)
	until(t, "filtered sees a leave", func() bool { _, st := filtered.snapshot(); return len(st) == 0 })

	for _, r := range []*recorder{p.ours, p.theirs, lateOurs} {
		assert.Empty(t, r.rvOrderViolations, "per object, calls in resourceVersion order")
	}
}

func TestResyncDeliversSameRVUpdatesOnlyToDueHandlers(t *testing.T) {
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	_, _ = srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}})
	p := startPair(t, srv, time.Second)
	quiet := newRecorder()
	_, err = p.oursInf.AddEventHandlerWithResyncPeriod(quiet, 0)
	require.NoError(t, err)
	resynced := func(r *recorder) bool {
		calls, _ := r.snapshot()
		return slices.Contains(calls, "update ns/a@2->2")
	}
	until(t, "both informers resync the default handler", func() bool { return resynced(p.ours) && resynced(p.theirs) })
	calls, _ := quiet.snapshot()
	assert.NotContains(t, calls, "update ns/a@2->2", "a handler with resync period 0 gets no resync updates")
}
