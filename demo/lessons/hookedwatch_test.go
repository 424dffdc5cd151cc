package lessons

import (
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

func podAt(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: lessonNamespace, Name: name, ResourceVersion: rv}}
}

func initialEventsEnd(rv string) *corev1.Pod {
	p := podAt("", rv)
	p.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	return p
}

// rvs is the resourceVersions of evs, in order.
func rvs(evs ...watch.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Object.(*corev1.Pod).ResourceVersion)
	}
	return out
}

// The hook runs when the initial-events-end bookmark arrives, and the
// bookmark goes on only once it has returned: when the reflector has the
// bookmark, the lesson's writes are made. A progress bookmark does not
// call it, and the events pass through in the stream's order.
func TestHookedWatchRunsTheHookBeforePassingTheBookmark(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := watch.NewFake()
		var calls atomic.Int32
		proceed := make(chan struct{})
		w := newHookedWatch(inner, func() { calls.Add(1); <-proceed })
		defer w.Stop()
		go func() {
			inner.Add(podAt("web-1", "1"))
			inner.Action(watch.Bookmark, podAt("", "2")) // a progress bookmark
			inner.Action(watch.Bookmark, initialEventsEnd("3"))
			inner.Modify(podAt("web-coalesced", "4"))
		}()
		first, progress := <-w.ResultChan(), <-w.ResultChan()
		synctest.Wait()
		require.EqualValues(t, 1, calls.Load(), "called at the initial-events-end bookmark")
		select {
		case ev := <-w.ResultChan():
			t.Fatalf("%v passed on while the hook runs", ev.Type)
		default:
		}
		close(proceed)
		end, last := <-w.ResultChan(), <-w.ResultChan()
		assert.Equal(t, watch.Bookmark, end.Type)
		assert.Equal(t, []string{"1", "2", "3", "4"}, rvs(first, progress, end, last), "in the stream's order")
		assert.EqualValues(t, 1, calls.Load())
	})
}

// Stop ends the relay even while nobody reads it, and stops the stream it
// relays.
func TestHookedWatchStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := watch.NewFake()
		w := newHookedWatch(inner, func() {})
		go inner.Add(podAt("web-1", "1"))
		synctest.Wait()
		w.Stop()
		_, open := <-w.ResultChan()
		require.False(t, open)
		assert.True(t, inner.IsStopped())
	})
}
