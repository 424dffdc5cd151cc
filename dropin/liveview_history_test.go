package dropin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// steppedClock is a clock the test moves.
type steppedClock struct{ ns atomic.Int64 }

func (c *steppedClock) now() time.Time       { return time.Unix(0, c.ns.Load()) }
func (c *steppedClock) step(d time.Duration) { c.ns.Add(int64(d)) }
func newSteppedClock() *steppedClock {
	c := &steppedClock{}
	c.ns.Store(time.Unix(2_000_000, 0).UnixNano())
	return c
}
func historySeries(a livepage.HistoryAnswer, metric string, labels map[string]string) (livepage.Series, bool) {
	for _, s := range a.Series {
		if s.Metric != metric {
			continue
		}
		match := true
		for k, v := range labels {
			if !strings.Contains(s.Labels[k], v) {
				match = false
			}
		}
		if match {
			return s, true
		}
	}
	return livepage.Series{}, false
}

// startController runs a ConfigMap informer described as desc (its type's
// description when desc is empty), a traced queue named queue fed by a
// configMapEnqueuer, and a worker, on srv, all traced by tp; it waits for
// the informer's cache to sync and returns the informer and how many keys
// the worker has done.
func startController(t *testing.T, srv *apiserver.Server, desc, queue string, tp *sdktrace.TracerProvider) (*dropin.Informer, func() int) {
	t.Helper()
	inf := dropin.NewSharedIndexInformerWithOptions(srv.ListerWatcher(apiserver.ConfigMaps, metav1.NamespaceAll), &corev1.ConfigMap{},
		cache.SharedIndexInformerOptions{ObjectDescription: desc}).(*dropin.Informer)
	require.NoError(t, inf.SetTracerProvider(tp))
	q := dropin.NewTracedQueue(queue, workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()))
	q.(*dropin.TracedQueue[string]).SetTracerProvider(tp)
	_, err := inf.AddEventHandler(configMapEnqueuer{q})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var done atomic.Int64
	wg.Go(func() { inf.RunWithContext(ctx) })
	wg.Go(func() {
		for {
			k, shutdown := q.Get()
			if shutdown {
				return
			}
			time.Sleep(time.Millisecond) // a reconcile's work: its time is plotted
			q.Forget(k)
			q.Done(k)
			done.Add(1)
		}
	})
	t.Cleanup(func() { cancel(); q.ShutDown(); wg.Wait() })
	require.True(t, cache.WaitForCacheSync(ctx.Done(), inf.HasSynced))
	return inf, func() int { return int(done.Load()) }
}

// The plots' history: the sampler's tick samples while no page is open,
// and the first api/history answers what it sampled: every series under its metric's
// name and labels (the informer's name, the handler's, the queue's); two
// seconds and two reconciles later, a page asking since its last answer
// gets one new point per series: adds as a rate (2 keys in 2 s: 1/s), the
// work and handler times as the mean of what ended in the interval, the
// depth and backlogs as read. A second page in the same second takes no
// second sample.
func TestLiveViewHistory(t *testing.T) {
	srv := startServer(t, configMaps("ns", "a", "b", "c")...)
	clk := newSteppedClock()
	t.Cleanup(dropin.UseLiveHistoryClock(clk.now))
	h := dropin.LiveViewHandler()
	_, done := startController(t, srv, "history-configmaps", "history-queue", sdktrace.NewTracerProvider())
	testutil.Eventually(t, "three keys done", func() bool { return done() == 3 })
	clk.step(time.Hour)
	assert.Zero(t, dropin.LiveHistorySamples(), "no tick yet: no sample")
	dropin.SampleLiveHistory() // the sampler's tick, no page open
	assert.Equal(t, uint64(1), dropin.LiveHistorySamples(), "the ticker samples with no page open")

	get := func(query string) (int, livepage.HistoryAnswer) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/history"+query, nil))
		var a livepage.HistoryAnswer
		if w.Code == http.StatusOK {
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &a))
		}
		return w.Code, a
	}
	code, first := get("")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, uint64(1), dropin.LiveHistorySamples(), "the page's first poll, in the tick's second, shows the tick's sample")
	inf := map[string]string{"name": "history-configmaps"}
	handler := map[string]string{"name": "history-configmaps", "handler": "dropin_test.configMapEnqueuer#0"}
	queue := map[string]string{"name": "history-queue"}
	for _, want := range []struct {
		metric string
		labels map[string]string
		points int
	}{
		{"informer_queued_items", inf, 1},
		{"informer_handler_pending_notifications", handler, 1},
		{"informer_handler_processing_latency_seconds", handler, 0}, // a mean needs an interval
		{"workqueue_depth", queue, 1},
		{"workqueue_adds_total", queue, 0}, // a rate too
		{"workqueue_work_duration_seconds", queue, 0},
	} {
		s, ok := historySeries(first, want.metric, want.labels)
		require.True(t, ok, "%s %v in %+v", want.metric, want.labels, first.Series)
		assert.Len(t, s.Points, want.points, want.metric)
	}
	depth, _ := historySeries(first, "workqueue_depth", queue)
	assert.Equal(t, livepage.Point{T: clk.now().UnixMilli(), V: 0}, depth.Points[0])

	for _, n := range []string{"d", "e"} {
		_, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: n}})
		require.NoError(t, err)
	}
	testutil.Eventually(t, "five keys done", func() bool { return done() == 5 })
	clk.step(2 * time.Second)
	code, second := get(fmt.Sprint("?since=", first.Now))
	require.Equal(t, http.StatusOK, code)
	for _, m := range []string{"informer_queued_items", "informer_handler_pending_notifications", "workqueue_depth"} {
		s, _ := historySeries(second, m, map[string]string{"name": "history-"})
		require.Len(t, s.Points, 1, "%s: only the point after since", m)
		assert.Zero(t, s.Points[0].V, "%s: all handled", m)
	}
	adds, _ := historySeries(second, "workqueue_adds_total", queue)
	require.Len(t, adds.Points, 1)
	assert.InDelta(t, 1.0, adds.Points[0].V, 1e-9, "two adds in two seconds")
	work, _ := historySeries(second, "workqueue_work_duration_seconds", queue)
	require.Len(t, work.Points, 1)
	assert.GreaterOrEqual(t, work.Points[0].V, 0.001, "each reconcile slept 1 ms")
	lat, _ := historySeries(second, "informer_handler_processing_latency_seconds", handler)
	require.Len(t, lat.Points, 1)
	assert.Positive(t, lat.Points[0].V)

	_, _ = get("")
	assert.Equal(t, uint64(2), dropin.LiveHistorySamples(), "another page in the same second: no sample")
	code, _ = get("?since=yesterday")
	assert.Equal(t, http.StatusBadRequest, code)
}

// The history is kept with no page open: from the handler's making, each
// tick samples, so a page opened four minutes into a quiet controller
// plots those four minutes, a point a second (and the one its request
// takes); after ten minutes it plots
// the last five (300 points, the cap), however long it waited.
func TestLiveViewHistoryKeptWithNoPageOpen(t *testing.T) {
	srv := startServer(t, configMaps("ns", "a")...)
	clk := newSteppedClock()
	t.Cleanup(dropin.UseLiveHistoryClock(clk.now))
	h := dropin.LiveViewHandler()
	_, done := startController(t, srv, "kept-configmaps", "kept-queue", sdktrace.NewTracerProvider())
	testutil.Eventually(t, "the key done", func() bool { return done() == 1 })
	depth := func() []livepage.Point {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/history", nil))
		require.Equal(t, http.StatusOK, w.Code)
		var a livepage.HistoryAnswer
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &a))
		s, ok := historySeries(a, "workqueue_depth", map[string]string{"name": "kept-queue"})
		require.True(t, ok, "the queue's depth is plotted")
		return s.Points
	}
	tick := func(n int) {
		for range n {
			dropin.SampleLiveHistory()
			clk.step(time.Second)
		}
	}
	tick(240)
	pts := depth()
	require.Len(t, pts, 241, "four minutes before the page opened, a point a second, and the page's own")
	assert.Equal(t, clk.now().Add(-240*time.Second).UnixMilli(), pts[0].T)
	tick(360)
	pts = depth()
	require.Len(t, pts, 300, "capped at the last 300 points")
	assert.Equal(t, clk.now().Add(-299*time.Second).UnixMilli(), pts[0].T, "the last five minutes")
}
