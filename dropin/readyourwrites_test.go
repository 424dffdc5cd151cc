package dropin_test

// Read-your-writes: what the two consumers of "has the cache seen my write?"
// ask of an informer, asked of client-go's and ours on one script.
//
//   - kube-controller-manager's pkg/controller/util/consistency (k8s.io/kubernetes
//     v1.36, RealConsistencyStore.EnsureReady) keeps the resourceVersion a
//     controller wrote at and compares it with the store's
//     LastStoreSyncResourceVersion (its LastSyncRVGetter interface): "not
//     ready" while the store's is older. The store's answer must be the same
//     on ours after every kind of change, bookmarks included.
//   - controller-runtime v0.25's EnableReadYourWritesConsistency
//     (pkg/client/internal/consistencyhandler) adds a handler, waits on its
//     registration's HasSyncedChecker().Done(), and then waits until a
//     handler call has carried a resourceVersion at least the written one
//     before it reads the cache.
//
// k8s.io/kubernetes cannot be imported here (it is not meant to be a
// library), so ensureReady below asks the same question as EnsureReady, with
// the same comparison (apimachinery's resourceversion.CompareResourceVersion).

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/tools/cache"
)

// lastSyncRVGetter is util/consistency's LastSyncRVGetter: what
// kube-controller-manager hands it is an informer's GetStore().
type lastSyncRVGetter interface{ LastStoreSyncResourceVersion() string }

// ensureReady answers as RealConsistencyStore.EnsureReady does for one
// written resourceVersion: ready when the store reports no version (the
// AtomicFIFO gate off) or one at least as new as the write.
func ensureReady(store lastSyncRVGetter, wrote string) error {
	read := store.LastStoreSyncResourceVersion()
	if read == "" {
		return nil
	}
	cmp, err := resourceversion.CompareResourceVersion(wrote, read)
	if err != nil {
		return nil
	}
	if cmp > 0 {
		return fmt.Errorf("read version: %s is not as new as written version: %s", read, wrote)
	}
	return nil
}

func (s server) createRV(name string) string {
	obj, err := s.srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}})
	require.NoError(s.t, err)
	return obj.(*corev1.Pod).ResourceVersion
}

// TestLastStoreSyncResourceVersionMatchesClientGo: after the initial state,
// a watch event, a bookmark past the last event, a delete, a stalled watch
// (the write made, not yet seen) and a relist, both stores report the same
// LastStoreSyncResourceVersion, and util/consistency's readiness check gives
// the same answer on both.
func TestLastStoreSyncResourceVersionMatchesClientGo(t *testing.T) {
	s := newServer(t, "a", "b")
	synctest.Test(t, func(t *testing.T) {
		s.t = t
		ours, theirs := pair(t, s, 1)
		same := func(step, want string) {
			t.Helper()
			var _ lastSyncRVGetter = ours.inf.GetStore()
			got, exp := ours.inf.GetStore().LastStoreSyncResourceVersion(), theirs.inf.GetStore().LastStoreSyncResourceVersion()
			require.Equal(t, exp, got, "%s: LastStoreSyncResourceVersion", step)
			require.Equal(t, want, got, "%s: LastStoreSyncResourceVersion", step)
			require.Equal(t, exp, ours.inf.GetIndexer().LastStoreSyncResourceVersion(), "%s: GetIndexer", step)
		}
		same("before Run", "")

		run(t, ours, theirs)
		synctest.Wait()
		same("initial state", s.srv.ResourceVersion())

		wrote := s.createRV("c")
		synctest.Wait()
		same("watch event", wrote)
		require.NoError(t, ensureReady(ours.inf.GetStore(), wrote))

		// A write elsewhere moves the server on; the pods' watches hear of
		// it only through a bookmark, which the store records too.
		_, err := s.srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "elsewhere"}})
		require.NoError(t, err)
		s.srv.SendBookmarks()
		synctest.Wait()
		same("bookmark", s.srv.ResourceVersion())

		s.remove("a")
		synctest.Wait()
		same("delete", s.srv.ResourceVersion())

		// The watches are cut and held: a write is made that neither
		// informer has seen, and both say so.
		stalls := []func(){s.srv.StallNext("watch"), s.srv.StallNext("watch")}
		s.srv.CloseWatches()
		synctest.Wait()
		before := s.srv.ResourceVersion()
		wrote = s.createRV("d")
		synctest.Wait()
		same("write not yet seen", before)
		errOurs, errTheirs := ensureReady(ours.inf.GetStore(), wrote), ensureReady(theirs.inf.GetStore(), wrote)
		require.Error(t, errTheirs)
		require.Equal(t, errTheirs, errOurs, "util/consistency's answer while the write is unseen")
		for _, release := range stalls {
			release()
		}
		synctest.Wait()
		same("watch resumed", wrote)
		require.NoError(t, ensureReady(ours.inf.GetStore(), wrote))

		s.relist(func() { s.remove("b") })
		same("relist", s.srv.ResourceVersion())
	})
}

// rvObserver is controller-runtime's consistency handler, reduced to what
// it asks of the informer: every call's resourceVersion, the highest kept.
// It also reads the cache inside each call, as a reconcile woken by it
// would: what it was told of must already be there.
type rvObserver struct {
	store cache.Store
	mu    sync.Mutex
	max   int64
	stale []string // calls whose object the cache did not yet hold
}

func (o *rvObserver) observe(obj any, deleted bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p := obj.(*corev1.Pod)
	rv, err := strconv.ParseInt(p.ResourceVersion, 10, 64)
	if err != nil {
		panic(err)
	}
	cached, exists, err := o.store.GetByKey(p.Namespace + "/" + p.Name)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.max = max(o.max, rv)
	switch {
	case err != nil:
		o.stale = append(o.stale, fmt.Sprintf("%s@%d: %v", p.Name, rv, err))
	case deleted && exists:
		o.stale = append(o.stale, fmt.Sprintf("delete %s@%d: still cached", p.Name, rv))
	case !deleted && (!exists || cached.(*corev1.Pod).ResourceVersion != p.ResourceVersion):
		o.stale = append(o.stale, fmt.Sprintf("%s@%d: cache has %v", p.Name, rv, cached))
	}
}

func (o *rvObserver) seen() (int64, []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.max, o.stale
}

func (o *rvObserver) OnAdd(obj any, _ bool)  { o.observe(obj, false) }
func (o *rvObserver) OnUpdate(_, newObj any) { o.observe(newObj, false) }
func (o *rvObserver) OnDelete(obj any)       { o.observe(obj, true) }

// TestReadYourWritesAsControllerRuntimeAsks: a handler added to a running
// informer and waited for through its registration's HasSyncedChecker (as
// controller-runtime's ConsistencyHandler.Register does) has seen the
// cached state; after a write it is told of the written resourceVersion,
// and by then the cache holds the write: on client-go's informer and on
// ours alike.
func TestReadYourWritesAsControllerRuntimeAsks(t *testing.T) {
	s := newServer(t, "a", "b")
	synctest.Test(t, func(t *testing.T) {
		s.t = t
		ours, theirs := pair(t, s, 0)
		run(t, ours, theirs)
		synctest.Wait()
		type watcher struct {
			side *side
			o    *rvObserver
		}
		var ws []watcher
		for _, side := range []*side{ours, theirs} {
			o := &rvObserver{store: side.inf.GetStore()}
			reg, err := side.inf.AddEventHandler(o)
			require.NoError(t, err)
			<-reg.HasSyncedChecker().Done()
			ws = append(ws, watcher{side, o})
		}
		check := func(step string, wrote string) {
			t.Helper()
			want, err := strconv.ParseInt(wrote, 10, 64)
			require.NoError(t, err)
			for _, w := range ws {
				got, stale := w.o.seen()
				require.Equal(t, want, got, "%s: %s's handler saw the write", step, w.side.name)
				require.Empty(t, stale, "%s: %s's handler read the cache behind what it was told", step, w.side.name)
				require.NoError(t, ensureReady(w.side.inf.GetStore(), wrote), "%s: %s", step, w.side.name)
			}
		}
		check("registered", s.srv.ResourceVersion())
		wrote := s.createRV("c")
		synctest.Wait()
		check("create", wrote)
		s.relabel("c", "x")
		synctest.Wait()
		check("update", s.srv.ResourceVersion())
		s.remove("a")
		synctest.Wait()
		check("delete", s.srv.ResourceVersion())
	})
}
