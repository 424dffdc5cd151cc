package reflector

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// What the reflector does with bad input from the server: refuse it, report it once, recover, and never lose a delete.

// A watch event whose resourceVersion is empty or not a number must not
// become the last synced RV. If it did, the next re-watch would start "from
// now" with synthetic ADDED events and no relist, and a pod deleted while
// the watch was down would stay in the cache for good.
func TestBadResourceVersionOnAWatchEventIsRefusedAndRelists(t *testing.T) {
	for name, rv := range map[string]string{"empty": "", "not a number": "v7"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.createPods("a", 2)
			r, s, errs := e.watchingListFirst(t, e.lw)
			synced := r.LastSyncResourceVersion()

			// The next watch request is held, so the delete below happens
			// while no watch is open.
			release := e.srv.StallNext("watch")
			defer release()
			bad := pod("a", "p0")
			bad.ResourceVersion = rv
			bad.Labels = map[string]string{"bad": "true"}
			e.srv.InjectWatchEvent(apiserver.Pods, watch.Modified, bad)
			testutil.Eventually(t, "bad event seen", func() bool { return r.LastSyncResourceVersion() != synced || len(errs.all()) > 0 })
			e.srv.CloseWatches()
			testutil.Eventually(t, "re-watch held", func() bool { return len(e.requests("watch")) == 2 })
			require.NoError(t, e.srv.Delete(apiserver.Pods, "a", "p1"))
			release()

			_, err := e.srv.Create(pod("a", "marker"))
			require.NoError(t, err)
			testutil.Eventually(t, "marker arrived", func() bool { return slices.Contains(s.keys(), "a/marker") })
			assert.Equal(t, []string{"a/marker", "a/p0"}, s.keys(), "the pod deleted while the watch was down left the store")
			assert.NotEqual(t, rv, r.LastSyncResourceVersion())

			obj, ok, err := s.GetByKey("a/p0")
			require.NoError(t, err)
			require.True(t, ok)
			assert.Empty(t, obj.(*corev1.Pod).Labels, "the bad event's object was refused, not applied")
			assert.NotContains(t, s.callsSnapshot(), "Update", "the bad event's object never reached the store")
			assert.Len(t, e.requests("list"), 2, "the reflector relisted: the stream could no longer be trusted")

			require.Len(t, errs.all(), 1, "%v", errs.all())
			msg := errs.all()[0].Error()
			for _, want := range []string{"a/p0", "metadata.resourceVersion", "not applied", "relisting from resourceVersion \"" + synced + "\""} {
				assert.Contains(t, msg, want)
			}
		})
	}
}

func TestNamelessWatchEventIsRefusedAndReported(t *testing.T) {
	e := newEnv(t)
	e.createPods("a", 1)
	_, s, errs := e.watchingListFirst(t, e.lw)

	for _, typ := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted} {
		nameless := pod("a", "")
		nameless.ResourceVersion = e.srv.ResourceVersion()
		e.srv.InjectWatchEvent(apiserver.Pods, typ, nameless)
	}
	testutil.Eventually(t, "reported", func() bool { return len(errs.all()) == 3 })
	_, err := e.srv.Create(pod("a", "after"))
	require.NoError(t, err)
	testutil.Eventually(t, "still watching", func() bool { return slices.Contains(s.keys(), "a/after") })

	assert.Equal(t, []string{"a/after", "a/p0"}, s.keys(), "no object under an empty name")
	assert.Equal(t, []string{"Replace", "Add"}, s.callsSnapshot(), "the nameless objects never reached the store")
	for i, typ := range []string{"ADDED", "MODIFIED", "DELETED"} {
		msg := errs.all()[i].Error()
		assert.Contains(t, msg, "refused a watch "+typ+" event for an object with no metadata.name")
		assert.Contains(t, msg, "never reaches the store or any handler")
	}
	assert.Len(t, e.requests("list"), 1, "a refused nameless event does not need a relist")
}

// listWith returns a ListWatch that watches pods but lists through list.
func listWith(e *env, list func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error)) *ListWatch {
	return &ListWatch{ListWithContextFunc: list, WatchFuncWithContext: e.lw.WatchWithContext}
}

func TestBadListItemsAreRefusedWithOneReportPerList(t *testing.T) {
	t.Run("wrong type", func(t *testing.T) {
		e := newEnv(t)
		for _, n := range []string{"c0", "c1", "c2", "c3"} {
			_, err := e.srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: n}})
			require.NoError(t, err)
		}
		e.createPods("a", 1)
		// A ListerWatcher whose LIST is for the wrong resource.
		lw := listWith(e, e.srv.ListerWatcher(apiserver.ConfigMaps, metav1.NamespaceAll).ListWithContext)
		_, s, errs := e.watchingListFirst(t, lw)
		_, err := e.srv.Create(pod("a", "live"))
		require.NoError(t, err)
		testutil.Eventually(t, "watch event applied", func() bool { return len(s.keys()) > 0 })

		assert.Equal(t, []string{"a/live"}, s.keys(), "no ConfigMap entered the Pod store")
		require.Len(t, errs.all(), 1, "one report for the whole LIST: %v", errs.all())
		msg := errs.all()[0].Error()
		for _, want := range []string{"refused 4 of 4 items of the LIST", "a/c0", "*v1.ConfigMap", "this reflector stores only *v1.Pod",
			"and 1 more", "never reach the store"} {
			assert.Contains(t, msg, want)
		}
		assert.NotContains(t, msg, "a/c3", "only the first few are named")
	})
	t.Run("no name", func(t *testing.T) {
		e := newEnv(t)
		e.createPods("a", 2)
		lw := listWith(e, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			obj, err := e.lw.ListWithContext(ctx, o)
			if err != nil {
				return obj, err
			}
			list := obj.(*corev1.PodList)
			list.Items = append(list.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", ResourceVersion: "2"}})
			return list, nil
		})
		_, s, errs := e.watchingListFirst(t, lw)

		assert.Equal(t, []string{"a/p0", "a/p1"}, s.keys())
		require.Len(t, errs.all(), 1, "%v", errs.all())
		msg := errs.all()[0].Error()
		assert.Contains(t, msg, "refused 1 of 3 items")
		assert.Contains(t, msg, "item 2 (namespace \"a\", resourceVersion \"2\") has no metadata.name")
		assert.Contains(t, msg, "the store holds the other 2 items")
		assert.Len(t, e.requests("list"), 1, "no relist: the server would send the same list again")
	})
}

// The GVK check of an Unstructured reflector applies to LIST items too.
func TestListItemsOfTheWrongGVKAreRefused(t *testing.T) {
	item := func(kind, name string) unstructured.Unstructured {
		return unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind,
			"metadata": map[string]any{"namespace": "a", "name": name, "resourceVersion": "3"}}}
	}
	lw := &ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &unstructured.UnstructuredList{
				Object: map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": "5"}},
				Items:  []unstructured.Unstructured{item("Pod", "p"), item("ConfigMap", "c")},
			}, nil
		},
		// A watch that stays open and quiet.
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}
	s, errs := newRecordingStore(), &errorLog{}
	expected := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod"}}
	r := NewReflectorWithOptions(lw, expected, s, ReflectorOptions{Backoff: fastBackoff, UseWatchList: listFirst})
	r.SetWatchErrorHandler(errs.handler)
	run(t, r)
	testutil.Eventually(t, "listed", func() bool { return r.LastSyncResourceVersion() == "5" })
	assert.Equal(t, []string{"a/p"}, s.keys())
	require.Len(t, errs.all(), 1, "%v", errs.all())
	assert.Contains(t, errs.all()[0].Error(), "refused 1 of 2 items of the LIST at resourceVersion 5: item 1 (a/c) is /v1, Kind=ConfigMap; this reflector stores only /v1, Kind=Pod")
}

// A LIST whose own resourceVersion is unusable must not become the last
// synced RV either: a WATCH from "" would start "now", and a delete made
// between the LIST and that WATCH would never arrive. The items still reach
// the store (they are the server's state), the cycle ends with one report,
// and the next LIST, with a good RV, is what the watch starts from.
func TestListWithABadResourceVersionIsNotRecordedAndRelists(t *testing.T) {
	e := newEnv(t)
	e.createPods("a", 2)
	first := true
	lw := listWith(e, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		obj, err := e.lw.ListWithContext(ctx, o)
		if err == nil && first {
			first = false // only the reflector's goroutine lists: no lock needed
			obj.(*corev1.PodList).ResourceVersion = ""
		}
		return obj, err
	})
	r, s, errs := e.watchingListFirst(t, lw)

	assert.Equal(t, []string{"a/p0", "a/p1"}, s.keys())
	assert.Len(t, e.requests("list"), 2, "the bad LIST was followed by a relist")
	watches := e.requests("watch")
	require.Len(t, watches, 1)
	assert.NotEmpty(t, watches[0].Query.Get("resourceVersion"), "the watch never starts from the bad (empty) RV")
	assert.Equal(t, watches[0].Query.Get("resourceVersion"), r.LastSyncResourceVersion())
	require.Len(t, errs.all(), 1, "%v", errs.all())
	for _, want := range []string{"list metadata.resourceVersion \"\"", "2 items were stored", "not recorded", "relisting"} {
		assert.Contains(t, errs.all()[0].Error(), want)
	}
}
