package dropin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/informerbench"
	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
	"github.com/informer-anatomy/informer-anatomy/liveprobe"
)

// cachedSize is the estimate summed over what inf's cache holds now: what
// the running total must equal once nothing moves.
func cachedSize(inf cache.SharedIndexInformer) int64 {
	var n int64
	for _, o := range inf.GetStore().List() {
		n += liveprobe.ObjectSize(o)
	}
	return n
}

type namedNoop struct {
	cache.ResourceEventHandlerFuncs
}

// The page's bytes and last relist, per informer: the running total equals
// the estimate summed over the cache after adds, updates that grow and
// shrink objects, deletes and a relist forced by a 410 (which drops the
// the count falls by the deleted ones); the relist's reason is "start",
// then the 410's status, each with its duration and objects once fetched. An
// informer with a transform that drops every ConfigMap's data shows the
// bytes before it above the bytes held.
func TestLiveViewShowsBytesAndLastRelist(t *testing.T) {
	srv := startServer(t)
	hs := httptest.NewServer(dropin.LiveViewHandler())
	t.Cleanup(hs.Close)
	data := func(n int) map[string]string { return map[string]string{"k": strings.Repeat("x", n)} }
	for i := range 20 {
		_, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "bytes", Name: "cm-" + string(rune('a'+i))}, Data: data(100 * i)})
		require.NoError(t, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	run := func(desc string, transform cache.TransformFunc) *dropin.Informer {
		inf := dropin.NewSharedIndexInformerWithOptions(srv.ListerWatcher(apiserver.ConfigMaps, "bytes"), &corev1.ConfigMap{},
			cache.SharedIndexInformerOptions{ObjectDescription: desc}).(*dropin.Informer)
		if transform != nil {
			require.NoError(t, inf.SetTransform(transform))
		}
		_, err := inf.AddEventHandler(&namedNoop{})
		require.NoError(t, err)
		wg.Go(func() { inf.RunWithContext(ctx) })
		require.True(t, cache.WaitForCacheSync(ctx.Done(), inf.HasSynced))
		return inf
	}
	plain := run("bytes-plain", nil)
	stripped := run("bytes-stripped", func(o any) (any, error) {
		if cm, ok := o.(*corev1.ConfigMap); ok {
			cm.Data = nil
		}
		return o, nil
	})
	// Each informer's box, found by its handler's name (the same type for
	// both) and its objects' estimate.
	state := func() (p, s livepage.ProcessInformer) {
		for _, i := range liveState(t, hs.URL+"/").Informers {
			if len(i.Handlers) != 1 || !strings.Contains(i.Handlers[0].Name, "namedNoop") {
				continue
			}
			if i.BytesBeforeTransform >= 0 {
				s = i
			} else {
				p = i
			}
		}
		return p, s
	}
	settled := func(what string, cached int) {
		t.Helper()
		testutil.Eventually(t, what, func() bool {
			p, s := state()
			return p.Cached == cached && s.Cached == cached &&
				p.CachedBytes == cachedSize(plain) && s.CachedBytes == cachedSize(stripped)
		})
	}
	settled("20 objects counted", 20)
	p, s := state()
	assert.Greater(t, p.CachedBytes, int64(100*190), "the data's bytes alone are 19,000")
	assert.Less(t, s.CachedBytes, int64(100*190), "the transform dropped the data")
	assert.Greater(t, s.BytesBeforeTransform, 2*s.CachedBytes, "before the transform: the data")
	assert.Equal(t, int64(-1), p.BytesBeforeTransform, "no transform")
	require.NotNil(t, p.LastRelist)
	assert.Equal(t, "start", p.LastRelist.Reason)
	assert.Equal(t, 20, p.LastRelist.Objects)
	assert.GreaterOrEqual(t, p.LastRelist.DurationMillis, int64(0), "the first list is in")

	for i := range 5 { // grow five, shrink five
		for _, n := range []int{i, 19 - i} {
			obj, err := srv.Get(apiserver.ConfigMaps, "bytes", "cm-"+string(rune('a'+n)))
			require.NoError(t, err)
			cm := obj.(*corev1.ConfigMap)
			cm.Data = data(1000 * (n % 3))
			_, err = srv.Update(cm)
			require.NoError(t, err)
		}
	}
	require.NoError(t, srv.Delete(apiserver.ConfigMaps, "bytes", "cm-k"))
	settled("updates and a delete counted", 19)

	// The next WATCH gets a 410: the reflector fetches everything again;
	// the objects deleted before it are gone from the count.
	require.NoError(t, srv.Delete(apiserver.ConfigMaps, "bytes", "cm-l"))
	require.NoError(t, srv.Delete(apiserver.ConfigMaps, "bytes", "cm-m"))
	srv.Inject(apiserver.Fault{Verb: "watch", Status: 410, Count: 2})
	srv.CloseWatches()
	settled("the relist counted", 17)
	testutil.Eventually(t, "the relist after the 410 shown", func() bool {
		p, s := state()
		return p.LastRelist != nil && strings.HasPrefix(p.LastRelist.Reason, "410 ") && p.LastRelist.DurationMillis >= 0 &&
			s.LastRelist != nil && strings.HasPrefix(s.LastRelist.Reason, "410 ")
	})
	p, _ = state()
	assert.Equal(t, 17, p.LastRelist.Objects)
}

// podList is n small pods.
func podList(n int) *corev1.PodList {
	l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: make([]corev1.Pod, n)}
	for i := range l.Items {
		l.Items[i].ObjectMeta = metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("pod-", i), ResourceVersion: "1", UID: types.UID(fmt.Sprint("uid-", i))}
	}
	return l
}

// What one api/state costs does not grow with the objects cached: no read
// sizes an object (the bytes are a running total, the count the cache's
// length: nothing walks the cache), the allocations of a read with one
// informer of 20,000 pods are those of a read with one of 1,000, and the
// informer's own entry in the answer is as long. The entry, not the whole
// answer: the answer also holds every informer, queue and traced event
// other tests of this package left in the process's live view, which
// change between the two reads (a CI run read 195 and 242 KB around the
// same two entries). Counted, not timed.
func TestLiveViewStateCostDoesNotGrowWithObjects(t *testing.T) {
	h := dropin.LiveViewHandler()
	measure := func(n int) (allocs float64, entry int) {
		ctx, cancel := context.WithCancel(context.Background())
		inf := dropin.NewSharedIndexInformer(informerbench.NewLW(podList(n), nil), &corev1.Pod{}, 0, cache.Indexers{})
		_, err := inf.AddEventHandler(&namedNoop{})
		require.NoError(t, err)
		wait := runInformer(inf, ctx)
		defer func() { cancel(); wait() }()
		require.True(t, cache.WaitForCacheSync(ctx.Done(), inf.HasSynced))
		testutil.Eventually(t, "all counted", func() bool {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/state", nil))
			return strings.Contains(w.Body.String(), fmt.Sprintf(`"cached":%d,"cachedBytes":%d`, n, cachedSize(inf)))
		})
		var body []byte
		read := func() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/state", nil))
			body = w.Body.Bytes()
		}
		sized := liveprobe.ObjectSizings()
		allocs = testing.AllocsPerRun(50, read)
		assert.Equal(t, sized, liveprobe.ObjectSizings(), "api/state sized objects")
		var st livepage.ProcessState
		require.NoError(t, json.Unmarshal(body, &st))
		for _, pi := range st.Process.Informers {
			if pi.Cached == n && len(pi.Handlers) == 1 && strings.Contains(pi.Handlers[0].Name, "namedNoop") {
				b, err := json.Marshal(pi)
				require.NoError(t, err)
				return allocs, len(b)
			}
		}
		t.Fatalf("api/state has no informer of %d objects with one namedNoop handler:\n%s", n, body)
		return 0, 0
	}
	smallAllocs, smallEntry := measure(1_000)
	largeAllocs, largeEntry := measure(20_000)
	t.Logf("per api/state: %.0f allocations, the informer's entry %d bytes with 1,000 pods cached; %.0f, %d with 20,000", smallAllocs, smallEntry, largeAllocs, largeEntry)
	assert.LessOrEqual(t, largeAllocs, smallAllocs*1.05+5, "a read of api/state allocates more often with more objects cached")
	// The entry's numbers have more digits with more objects, nothing else.
	assert.LessOrEqual(t, largeEntry, smallEntry+64, "the informer's entry grows with its objects")
}

// pagedOnly is a ListerWatcher that cannot stream its initial state, so
// the reflector lists it in pages.
type pagedOnly struct{ *apiserver.ListerWatcher }

func (pagedOnly) IsWatchListSemanticsUnSupported() bool { return true }

// The two informers' handlers, told apart in api/state by their names.
type streamedOnce struct {
	cache.ResourceEventHandlerFuncs
}
type listedOnce struct {
	cache.ResourceEventHandlerFuncs
}

// The bytes before the transform are the objects' estimate before it, on
// both first-request paths: each object counted once. A streamed object is
// given to the transform twice, as client-go gives it (the watch-list's
// temporary store, then the RealFIFO's Replace); counting the second call,
// which is given what the first returned, would read the bytes before as
// those after for half the calls: 1.5 times the held bytes for a transform
// that halves every object, instead of 2.
func TestLiveViewBytesBeforeTheTransformCountEachObjectOnce(t *testing.T) {
	srv := startServer(t)
	hs := httptest.NewServer(dropin.LiveViewHandler())
	t.Cleanup(hs.Close)
	var want int64 // the originals' estimate, summed
	for i := range 20 {
		obj, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "before-once", Name: fmt.Sprint("cm-", i)},
			Data: map[string]string{"k": strings.Repeat("x", 50*i)}})
		require.NoError(t, err)
		want += liveprobe.ObjectSize(obj)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	lw := srv.ListerWatcher(apiserver.ConfigMaps, "before-once")
	for _, c := range []struct {
		path    string
		lw      cache.ListerWatcher
		handler cache.ResourceEventHandler
		name    string
	}{
		{"watch-list stream", lw, &streamedOnce{}, "streamedOnce"},
		{"paged LIST", pagedOnly{lw}, &listedOnce{}, "listedOnce"},
	} {
		inf := dropin.NewSharedIndexInformerWithOptions(c.lw, &corev1.ConfigMap{},
			cache.SharedIndexInformerOptions{ObjectDescription: "before-once-" + c.name}).(*dropin.Informer)
		require.NoError(t, inf.SetTransform(func(o any) (any, error) {
			if cm, ok := o.(*corev1.ConfigMap); ok {
				cm.Data = nil
			}
			return o, nil
		}))
		_, err := inf.AddEventHandler(c.handler)
		require.NoError(t, err)
		wg.Go(func() { inf.RunWithContext(ctx) })
		require.True(t, cache.WaitForCacheSync(ctx.Done(), inf.HasSynced))
		var got livepage.ProcessInformer
		testutil.Eventually(t, c.path+": 20 objects counted", func() bool {
			var ok bool
			got, ok = findInformer(liveState(t, hs.URL+"/"), c.name)
			return ok && got.Cached == 20 && got.CachedBytes == cachedSize(inf)
		})
		assert.InDelta(t, want, got.BytesBeforeTransform, 1, "%s: the bytes before the transform (%d held after it)", c.path, got.CachedBytes)
	}
}
