package reflector

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

func TestFirstListAtZeroThenWatchFromTheListRV(t *testing.T) {
	e := newEnv(t)
	e.createPods("a", 3)
	s, errs := newRecordingStore(), &errorLog{}
	r := newTestReflector(e.lw, s, errs, ReflectorOptions{UseWatchList: listFirst})
	run(t, r)
	testutil.Eventually(t, "store synced", func() bool { return len(s.keys()) == 3 })
	testutil.Eventually(t, "watch opened", func() bool { return len(e.requests("watch")) == 1 })

	list := e.requests("list")[0]
	assert.Equal(t, "0", list.Query.Get("resourceVersion"), "first LIST at RV 0: any recent state, from the watch cache")
	assert.Equal(t, "500", list.Query.Get("limit"), "RV 0 lists are paged by 500")

	w := e.requests("watch")[0]
	assert.Equal(t, "4", w.Query.Get("resourceVersion"), "watch from the list's RV")
	assert.Equal(t, "true", w.Query.Get("allowWatchBookmarks"))
	timeout, err := strconv.Atoi(w.Query.Get("timeoutSeconds"))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, timeout, 300)
	assert.LessOrEqual(t, timeout, 600)
	assert.Equal(t, "4", r.LastSyncResourceVersion())
	assert.Empty(t, errs.all())
}

func TestWatchExpiredRelistsAtLastSyncedRV(t *testing.T) {
	e := newEnv(t)
	e.createPods("a", 2)
	r, s, errs := e.watchingListFirst(t, e.lw)

	_, err := e.srv.Create(pod("a", "late"))
	require.NoError(t, err)
	testutil.Eventually(t, "event applied", func() bool { return r.LastSyncResourceVersion() == "4" })

	// History compacted past RV 4 and the watch dropped: the re-watch from RV
	// 4 gets an ERROR event with 410, which ends this ListAndWatch and causes a
	// relist.
	e.forceRelist()
	relist := e.requests("list")[1]
	assert.Equal(t, "4", relist.Query.Get("resourceVersion"), "relist at the last synced RV, not at \"\"")
	assert.Empty(t, relist.Query.Get("limit"), "a list at a specific RV is not paged, so the watch cache can serve it")
	require.NotNil(t, errs.find(isExpiredError), "the Expired watch reaches the WatchErrorHandler: %v", errs.all())
	assert.Equal(t, []string{"a/late", "a/p0", "a/p1"}, s.keys())
}

func TestExpiredOrTooLargeListRetriesAtOnceWithEmptyRV(t *testing.T) {
	for _, f := range []apiserver.Fault{
		{Verb: "list", Status: http.StatusGone},
		{Verb: "list", Status: http.StatusGatewayTimeout, Cause: metav1.CauseTypeResourceVersionTooLarge},
	} {
		t.Run(strconv.Itoa(f.Status), func(t *testing.T) {
			e := newEnv(t)
			e.createPods("a", 2)
			e.srv.Inject(f)
			s, errs := newRecordingStore(), &errorLog{}
			run(t, newTestReflector(e.lw, s, errs, ReflectorOptions{UseWatchList: listFirst}))
			testutil.Eventually(t, "synced", func() bool { return len(s.keys()) == 2 })

			lists := e.requests("list")
			require.Len(t, lists, 2)
			assert.Equal(t, f.Status, lists[0].Fault)
			assert.Equal(t, "", lists[1].Query.Get("resourceVersion"), "retry with RV \"\": the latest state, a quorum read")
			assert.Empty(t, errs.all(), "recovered within one ListAndWatch: nothing to report")
		})
	}
}

func TestPagingRules(t *testing.T) {
	t.Run("paged first list keeps paging", func(t *testing.T) {
		e := newEnv(t)
		e.createPods("a", 1200)
		s := newRecordingStore()
		run(t, newTestReflector(e.lw, s, &errorLog{}, ReflectorOptions{UseWatchList: listFirst}))
		testutil.Eventually(t, "synced", func() bool { return len(s.keys()) == 1200 })
		lists := e.requests("list")
		require.Len(t, lists, 3, "1200 objects in pages of 500")
		assert.NotEmpty(t, lists[1].Query.Get("continue"))
		assert.Empty(t, lists[1].Query.Get("resourceVersion"), "continue pages carry the token, not the RV")
		e.forceRelist()
		assert.Equal(t, "500", e.requests("list")[3].Query.Get("limit"), "the server paged at RV 0, so it has no watch cache: keep paging")
	})
	t.Run("unpaged first list stops paging at a specific RV", func(t *testing.T) {
		e := newEnv(t)
		e.createPods("a", 5)
		s := newRecordingStore()
		run(t, newTestReflector(e.lw, s, &errorLog{}, ReflectorOptions{UseWatchList: listFirst}))
		testutil.Eventually(t, "synced", func() bool { return len(s.keys()) == 5 })
		e.forceRelist()
		assert.Empty(t, e.requests("list")[1].Query.Get("limit"))
	})
	t.Run("WatchListPageSize", func(t *testing.T) {
		e := newEnv(t)
		e.createPods("a", 5)
		s := newRecordingStore()
		r := newTestReflector(e.lw, s, &errorLog{}, ReflectorOptions{UseWatchList: listFirst})
		r.WatchListPageSize = 2
		run(t, r)
		testutil.Eventually(t, "synced", func() bool { return len(s.keys()) == 5 })
		assert.Len(t, e.requests("list"), 3)
		assert.Equal(t, "2", e.requests("list")[0].Query.Get("limit"))
	})
	t.Run("expired continue token falls back to a full list", func(t *testing.T) {
		e := newEnv(t)
		e.createPods("a", 5)
		s := newRecordingStore()
		pages := 0
		lw := &ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				obj, err := e.lw.ListWithContext(ctx, o)
				if pages++; pages == 1 {
					e.srv.Compact() // the snapshot behind the continue token is gone
				}
				return obj, err
			},
			WatchFuncWithContext: e.lw.WatchWithContext,
		}
		r := newTestReflector(lw, s, &errorLog{}, ReflectorOptions{UseWatchList: listFirst})
		r.WatchListPageSize = 2
		run(t, r)
		testutil.Eventually(t, "synced", func() bool { return len(s.keys()) == 5 })
		lists := e.requests("list")
		require.GreaterOrEqual(t, len(lists), 3)
		assert.NotEmpty(t, lists[1].Query.Get("continue"))
		assert.Empty(t, lists[2].Query.Get("continue"))
		assert.Empty(t, lists[2].Query.Get("limit"), "the retry is one unpaged list")
		assert.Equal(t, "0", lists[2].Query.Get("resourceVersion"), "at the originally requested RV")
	})
}

func TestReplaceHappensBeforeTheRVIsRecorded(t *testing.T) {
	e := newEnv(t)
	e.createPods("a", 2)
	s, errs := newRecordingStore(), &errorLog{}
	r := newTestReflector(e.lw, s, errs, ReflectorOptions{UseWatchList: listFirst})
	var rvDuringReplace []string
	s.onReplace = func() { rvDuringReplace = append(rvDuringReplace, r.LastSyncResourceVersion()) }
	s.failReplace = 1
	run(t, r)
	testutil.Eventually(t, "synced", func() bool { return len(s.keys()) == 2 })

	assert.Equal(t, []string{"", ""}, rvDuringReplace, "the RV is recorded only after Replace succeeds")
	lists := e.requests("list")
	require.Len(t, lists, 2)
	assert.Equal(t, "0", lists[1].Query.Get("resourceVersion"), "a failed Replace leaves the RV alone, so the retry lists again from the start")
	require.NotNil(t, errs.find(func(err error) bool { return err != nil && contains(err.Error(), "unable to sync list result") }))
}

func TestNormalWatchCloseReopensWithoutRelist(t *testing.T) {
	e := newEnv(t)
	e.createPods("a", 1)
	r, s, errs := e.watchingListFirst(t, e.lw)
	e.bookmark(r) // an event, so the close below is not a "very short watch"

	e.srv.CloseWatches()
	testutil.Eventually(t, "re-watched", func() bool { return len(e.requests("watch")) == 2 })
	_, err := e.srv.Create(pod("a", "after"))
	require.NoError(t, err)
	testutil.Eventually(t, "event after re-watch applied", func() bool { return len(s.keys()) == 2 })
	assert.Len(t, e.requests("list"), 1, "no relist")
	assert.Equal(t, "3", e.requests("watch")[1].Query.Get("resourceVersion"), "re-watch from the bookmark's RV")
	assert.Empty(t, errs.all())
}

func TestRefusedConnectionBacksOffAndRewatchesWithoutRelist(t *testing.T) {
	e := newEnv(t)
	e.createPods("a", 1)
	refused := make(chan struct{}, 100)
	lw := &ListWatch{
		ListWithContextFunc: e.lw.ListWithContext,
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			w, err := e.lw.WatchWithContext(ctx, o)
			if err != nil && isWatchErrorRetriable(err) {
				refused <- struct{}{}
			}
			return w, err
		},
	}
	r, s, errs := e.watchingListFirst(t, lw)
	e.bookmark(r) // an event, so the close below is not a "very short watch"

	e.srv.Stop()
	for range 2 { // at least two attempts: it keeps backing off and retrying
		select {
		case <-refused:
		case <-time.After(20 * time.Second):
			t.Fatalf("no refused watch attempt; the handler saw: %v; server saw %+v", errs.all(), e.requests("list", "watch"))
		}
	}
	require.NoError(t, e.srv.Restart())
	_, err := e.srv.Create(pod("a", "after-restart"))
	require.NoError(t, err)
	testutil.Eventually(t, "caught up", func() bool { return len(s.keys()) == 2 })
	assert.Len(t, e.requests("list"), 1, "connection refused is retried as a watch, not a relist")
	// A restart of a few seconds is ridden out quietly, as client-go rides
	// it out: the retries are logged at V(4), and the handler is told only
	// of an outage that lasts (TestALongOutageIsReportedAsItGoesOn).
	assert.Empty(t, errs.all(), "a brief outage reaches no handler")
}

func TestTooManyRequestsOnWatchBacksOffWithoutRelist(t *testing.T) {
	e := newEnv(t)
	e.createPods("a", 1)
	e.srv.Inject(apiserver.Fault{Verb: "watch", Status: http.StatusTooManyRequests, Count: 2})
	s, errs := newRecordingStore(), &errorLog{}
	run(t, newTestReflector(e.lw, s, errs, ReflectorOptions{UseWatchList: listFirst}))
	testutil.Eventually(t, "third watch opened", func() bool { return len(e.requests("watch")) == 3 })
	_, err := e.srv.Create(pod("a", "b"))
	require.NoError(t, err)
	testutil.Eventually(t, "caught up", func() bool { return len(s.keys()) == 2 })
	w := e.requests("watch")
	assert.Equal(t, []int{429, 429, 0}, []int{w[0].Fault, w[1].Fault, w[2].Fault})
	assert.Len(t, e.requests("list"), 1)
	assert.Empty(t, errs.all(), "two 429s in a second reach no handler, as with client-go (logged at V(4))")
}

func TestErrorEventBecomesAnAPIError(t *testing.T) {
	internal := apierrors.NewInternalError(errors.New("etcd is having a bad day"))
	st := internal.Status()
	t.Run("relist by default", func(t *testing.T) {
		e := newEnv(t)
		_, _, errs := e.watchingListFirst(t, e.lw)
		e.srv.InjectWatchEvent(apiserver.Pods, watch.Error, &st)
		testutil.Eventually(t, "relisted", func() bool { return len(e.requests("list")) == 2 })
		err := errs.find(apierrors.IsInternalError)
		require.NotNil(t, err, "%v", errs.all())
		assert.Contains(t, err.Error(), "etcd is having a bad day")
	})
	t.Run("re-watch within MaxInternalErrorRetryDuration", func(t *testing.T) {
		e := newEnv(t)
		s, errs := newRecordingStore(), &errorLog{}
		r := newTestReflector(e.lw, s, errs, ReflectorOptions{UseWatchList: listFirst})
		r.MaxInternalErrorRetryDuration = 10 * 60e9
		run(t, r)
		testutil.Eventually(t, "watching", func() bool { return e.srv.WatchCount() == 1 })
		e.srv.InjectWatchEvent(apiserver.Pods, watch.Error, &st)
		testutil.Eventually(t, "re-watched", func() bool { return len(e.requests("watch")) == 2 })
		assert.Len(t, e.requests("list"), 1)
		assert.Empty(t, errs.all())
	})
}

func TestBookmarksOnlyAdvanceTheRV(t *testing.T) {
	e := newEnv(t)
	e.createPods("a", 1)
	r, s, _ := e.watchingListFirst(t, e.lw)
	_, err := e.srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "other-resource"}})
	require.NoError(t, err) // moves the server's RV to 3 without a pod event
	e.srv.SendBookmarks()
	testutil.Eventually(t, "RV advanced", func() bool { return r.LastSyncResourceVersion() == "3" })
	assert.Equal(t, []string{"Replace"}, s.callsSnapshot(), "a bookmark writes nothing to the store")
	assert.Equal(t, []string{"a/p0"}, s.keys())
}

func TestWrongTypeIsDroppedAndReported(t *testing.T) {
	e := newEnv(t)
	_, s, errs := e.watchingListFirst(t, e.lw)
	e.srv.InjectWatchEvent(apiserver.Pods, watch.Added,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "intruder", ResourceVersion: "1"}})
	testutil.Eventually(t, "reported", func() bool { return len(errs.all()) == 1 })
	assert.Contains(t, errs.all()[0].Error(), "*v1.ConfigMap; this reflector stores only *v1.Pod")

	_, err := e.srv.Create(pod("a", "real"))
	require.NoError(t, err)
	testutil.Eventually(t, "still running", func() bool { return len(s.keys()) == 1 })
	assert.Equal(t, []string{"a/real"}, s.keys(), "the wrong object never reached the store")
	assert.Len(t, e.requests("list"), 1, "dropping one event does not need a relist")
}

func TestMalformedWatchDataIsReportedAndRecovered(t *testing.T) {
	e := newEnv(t)
	_, s, errs := e.watchingListFirst(t, e.lw)
	e.srv.InjectRawWatchData(apiserver.Pods, []byte(`{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":12}}}`+"\n"))
	testutil.Eventually(t, "reported", func() bool { return len(errs.all()) > 0 })
	assert.Contains(t, errs.all()[0].Error(), "unable to decode an event from the watch stream")

	_, err := e.srv.Create(pod("a", "after"))
	require.NoError(t, err)
	testutil.Eventually(t, "recovered", func() bool { return len(s.keys()) == 1 })
}

func TestForbiddenIsReportedClearlyAndRetried(t *testing.T) {
	e := newEnv(t)
	e.createPods("a", 1)
	e.srv.Inject(apiserver.Fault{Verb: "list", Status: http.StatusForbidden})
	s, errs := newRecordingStore(), &errorLog{}
	run(t, newTestReflector(e.lw, s, errs, ReflectorOptions{UseWatchList: listFirst}))
	testutil.Eventually(t, "synced after the 403", func() bool { return len(s.keys()) == 1 })
	require.Len(t, errs.all(), 1)
	err := errs.all()[0]
	assert.True(t, apierrors.IsForbidden(err))
	assert.Contains(t, err.Error(), `failed to list *v1.Pod: pods is forbidden: User "test" cannot list resource "pods"`)
}

func TestWatchList(t *testing.T) {
	t.Run("by default streams the initial state instead of listing", func(t *testing.T) {
		e := newEnv(t)
		e.createPods("a", 3)
		s, errs := newRecordingStore(), &errorLog{}
		r := newTestReflector(e.lw, s, errs, ReflectorOptions{})
		run(t, r)
		testutil.Eventually(t, "synced", func() bool { return len(s.keys()) == 3 })
		assert.Empty(t, e.requests("list"))
		w := e.requests("watch")[0]
		assert.Equal(t, "true", w.Query.Get("sendInitialEvents"))
		assert.Equal(t, "NotOlderThan", w.Query.Get("resourceVersionMatch"))
		assert.Equal(t, []string{"Replace"}, s.callsSnapshot(), "streamed objects reach the store as one Replace")
		assert.Equal(t, "4", r.LastSyncResourceVersion())

		_, err := e.srv.Create(pod("a", "live"))
		require.NoError(t, err)
		testutil.Eventually(t, "same stream carries changes", func() bool { return len(s.keys()) == 4 })
		assert.Len(t, e.requests("watch"), 1)
	})
	t.Run("a 429 is retried as a watch-list", func(t *testing.T) {
		e := newEnv(t)
		e.createPods("a", 2)
		e.srv.Inject(apiserver.Fault{Verb: "watch", Status: http.StatusTooManyRequests, Count: 2})
		s, errs := newRecordingStore(), &errorLog{}
		run(t, newTestReflector(e.lw, s, errs, ReflectorOptions{}))
		testutil.Eventually(t, "synced", func() bool { return len(s.keys()) == 2 })
		assert.Empty(t, e.requests("list"), "a 429 is retried, not answered with a LIST")
		assert.Len(t, e.requests("watch"), 3, "two 429s, then the stream")
		assert.Empty(t, errs.all(), "retried for a second: logged at V(2), as upstream, and no handler told")
	})
	t.Run("falls back to LIST on error", func(t *testing.T) {
		e := newEnv(t)
		e.createPods("a", 3)
		e.srv.Inject(apiserver.Fault{Verb: "watch", Status: http.StatusForbidden})
		s, errs := newRecordingStore(), &errorLog{}
		run(t, newTestReflector(e.lw, s, errs, ReflectorOptions{}))
		testutil.Eventually(t, "synced", func() bool { return len(s.keys()) == 3 })
		assert.Len(t, e.requests("list"), 1)
		assert.Empty(t, errs.all(), "the fallback is silent: the LIST worked")
	})
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestForbiddenWatchIsReportedAndRelists(t *testing.T) {
	e := newEnv(t)
	e.createPods("a", 1)
	e.srv.Inject(apiserver.Fault{Verb: "watch", Status: http.StatusForbidden})
	s, errs := newRecordingStore(), &errorLog{}
	run(t, newTestReflector(e.lw, s, errs, ReflectorOptions{UseWatchList: listFirst}))
	testutil.Eventually(t, "watching after the 403", func() bool { return e.srv.WatchCount() == 1 })
	require.Len(t, errs.all(), 1)
	assert.True(t, apierrors.IsForbidden(errs.all()[0]))
	assert.Contains(t, errs.all()[0].Error(), "failed to watch *v1.Pod: pods is forbidden")
	assert.Len(t, e.requests("list"), 2, "a failed watch request that is not retriable ends the cycle: relist")
}

func TestStopChannelEntryPoints(t *testing.T) {
	e := newEnv(t)
	e.createPods("a", 1)
	s := newRecordingStore()
	r := NewNamedReflector("my-pods", e.lw, &corev1.Pod{}, s, 0)
	assert.Equal(t, "my-pods", r.Name())
	assert.Equal(t, "*v1.Pod", r.TypeDescription())

	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); r.Run(stop) }()
	testutil.Eventually(t, "synced", func() bool { return len(s.keys()) == 1 })
	close(stop)
	<-done // Run returns once stopCh is closed

	stop2 := make(chan struct{})
	errc := make(chan error, 1)
	go func() { errc <- r.ListAndWatch(stop2) }()
	testutil.Eventually(t, "second ListAndWatch watching", func() bool { return e.srv.WatchCount() == 1 })
	close(stop2)
	assert.NoError(t, <-errc, "stopping is not an error")
}
