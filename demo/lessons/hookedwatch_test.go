package lessons

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

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

// The stream holds the initial-events-end bookmark until the lesson's
// writes have come in behind it, then hands them on right after it: when
// the reflector has the bookmark, the writes have left the server's
// stream. Before, the bookmark went on at once and the writes were still
// on their way, which the pop loop could win under load (the coalesce
// lesson then reported a lost race, and a test failed in CI).
func TestHookedWatchHoldsTheBookmarkUntilTheWritesArrive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := watch.NewFake()
		var delivered atomic.Int32
		w := newHookedWatch(inner, func() string {
			go func() {
				for _, rv := range []string{"3", "4"} {
					inner.Modify(podAt("web-coalesced", rv)) // returns once the hooked watch took it
					delivered.Add(1)
				}
			}()
			return "4"
		})
		defer w.Stop()
		go func() {
			inner.Add(podAt("web-1", "1"))
			inner.Action(watch.Bookmark, initialEventsEnd("2"))
		}()
		first, bookmark := <-w.ResultChan(), <-w.ResultChan()
		synctest.Wait()
		assert.EqualValues(t, 2, delivered.Load(), "the writes came in before the bookmark went on")
		assert.Equal(t, []string{"1", "2"}, rvs(first, bookmark))
		assert.Equal(t, watch.Bookmark, bookmark.Type)
		next, last := <-w.ResultChan(), <-w.ResultChan()
		assert.Equal(t, []string{"3", "4"}, rvs(next, last), "in the stream's order, right behind the bookmark")
	})
}

// A hook that wrote nothing (or failed) holds nothing; a write whose event
// never comes holds the bookmark for holdLimit, not for ever.
func TestHookedWatchHoldsNoLongerThanItMust(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rv    string
		holds time.Duration
	}{
		{"nothing written", "", 0},
		{"the write's event never comes", "9", holdLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := watch.NewFake()
				w := newHookedWatch(inner, func() string { return tc.rv })
				defer w.Stop()
				go inner.Action(watch.Bookmark, initialEventsEnd("2"))
				start := time.Now()
				ev, ok := <-w.ResultChan()
				require.True(t, ok)
				assert.Equal(t, watch.Bookmark, ev.Type)
				assert.Equal(t, tc.holds, time.Since(start))
			})
		})
	}
}
