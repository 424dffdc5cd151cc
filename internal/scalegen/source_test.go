package scalegen

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

var (
	_ cache.ListerWatcher            = (*Source)(nil)
	_ cache.ListerWatcherWithContext = (*Source)(nil)
)

func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		require.True(t, ok, "the watch closed")
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
		return watch.Event{}
	}
}

// A paged LIST hands out every pod once, page by page, each page carrying
// the first page's resourceVersion; a bad continue token is a 400 that says
// what a token looks like.
func TestPagedListServesEveryPodOnce(t *testing.T) {
	src := NewSource(NewGenerator(3), 1234, PagedList)
	require.True(t, src.IsWatchListSemanticsUnSupported())
	seen := map[string]bool{}
	opts := metav1.ListOptions{Limit: 500}
	pages := 0
	for {
		obj, err := src.List(opts)
		require.NoError(t, err)
		list := obj.(*corev1.PodList)
		require.Equal(t, "1234", list.ResourceVersion)
		for _, p := range list.Items {
			key := p.Namespace + "/" + p.Name
			require.False(t, seen[key], "%s twice", key)
			seen[key] = true
		}
		pages++
		if list.Continue == "" {
			break
		}
		opts.Continue = list.Continue
	}
	require.Equal(t, 3, pages)
	require.Len(t, seen, 1234)
	lists, _ := src.Requests()
	require.Equal(t, int64(3), lists)

	_, err := src.List(metav1.ListOptions{Limit: 10, Continue: "garbage"})
	require.True(t, apierrors.IsBadRequest(err), "%v", err)
	require.ErrorContains(t, err, "<index>/<resourceVersion>")

	// Without a limit, one page holds everything.
	obj, err := src.List(metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, obj.(*corev1.PodList).Items, 1234)

	// A paged-list source refuses to stream, as a server with WatchList off does.
	_, err = src.Watch(metav1.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	require.True(t, apierrors.IsInvalid(err), "%v", err)
}

// A watch-list streams every pod as ADDED, then the initial-events-end
// bookmark at the state's resourceVersion; an Update then arrives as
// MODIFIED, and Expire ends the watch with a 410, after which a watch from
// the old resourceVersion is refused with 410 too.
func TestWatchListThenUpdatesThenExpired(t *testing.T) {
	const n = 300
	src := NewSource(NewGenerator(3), n, WatchList)
	require.False(t, src.IsWatchListSemanticsUnSupported())
	w, err := src.WatchWithContext(context.Background(), metav1.ListOptions{SendInitialEvents: ptr(true), AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	require.NoError(t, err)
	for i := range n {
		ev := next(t, w)
		require.Equal(t, watch.Added, ev.Type)
		require.Equal(t, src.gen.Key(i), ev.Object.(*corev1.Pod).Namespace+"/"+ev.Object.(*corev1.Pod).Name)
	}
	ev := next(t, w)
	require.Equal(t, watch.Bookmark, ev.Type)
	require.Equal(t, "true", ev.Object.(*corev1.Pod).Annotations[metav1.InitialEventsAnnotationKey])
	require.Equal(t, "300", ev.Object.(*corev1.Pod).ResourceVersion)

	src.Update(7)
	src.Update(7)
	for _, rv := range []string{"301", "302"} {
		ev = next(t, w)
		require.Equal(t, watch.Modified, ev.Type)
		require.Equal(t, rv, ev.Object.(*corev1.Pod).ResourceVersion)
		require.Equal(t, src.gen.Key(7), ev.Object.(*corev1.Pod).Namespace+"/"+ev.Object.(*corev1.Pod).Name)
	}
	require.Equal(t, int32(2), ev.Object.(*corev1.Pod).Status.ContainerStatuses[0].RestartCount)

	// A plain watch from 301 gets the change after it.
	w2, err := src.Watch(metav1.ListOptions{ResourceVersion: "301"})
	require.NoError(t, err)
	require.Equal(t, "302", next(t, w2).Object.(*corev1.Pod).ResourceVersion)

	require.False(t, src.FirstRequest().IsZero())
	src.Expire()
	require.True(t, src.FirstRequest().IsZero(), "Expire starts the count again")
	for _, w := range []watch.Interface{w, w2} {
		ev = next(t, w)
		require.Equal(t, watch.Error, ev.Type)
		require.True(t, apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)), "%v", ev.Object)
		_, open := <-w.ResultChan()
		require.False(t, open)
	}
	_, err = src.Watch(metav1.ListOptions{ResourceVersion: "301"})
	require.True(t, apierrors.IsResourceExpired(err), "%v", err)

	// A LIST after the changes shows pod 7 at its latest version.
	obj, err := src.List(metav1.ListOptions{})
	require.NoError(t, err)
	require.Equal(t, "302", obj.(*corev1.PodList).Items[7].ResourceVersion)
}

// Stop ends a watch that waits for changes, and closes its channel.
func TestStopEndsAWaitingWatch(t *testing.T) {
	src := NewSource(NewGenerator(3), 5, WatchList)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := src.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "5"})
	require.NoError(t, err)
	cancel()
	select {
	case _, open := <-w.ResultChan():
		require.False(t, open)
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not end within 10s of its context")
	}
}

// Reach closes when the handler has counted that many calls, of any kind.
func TestCounterReach(t *testing.T) {
	var c Counter
	done := c.Reach(3)
	c.OnAdd(nil, true)
	c.OnUpdate(nil, nil)
	select {
	case <-done:
		t.Fatal("closed at 2 of 3")
	default:
	}
	c.OnDelete(nil)
	<-done
	a, u, d := c.Counts()
	require.Equal(t, [3]int64{1, 1, 1}, [3]int64{a, u, d})
	<-c.Reach(2) // already reached: closed at once
}
