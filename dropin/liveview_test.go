package dropin_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

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

// configMapEnqueuer is a user's handler type: the page names it.
type configMapEnqueuer struct {
	q workqueue.TypedInterface[string]
}

func (h configMapEnqueuer) OnAdd(obj any, _ bool) { h.enqueue(obj) }
func (h configMapEnqueuer) OnUpdate(_, obj any)   { h.enqueue(obj) }
func (h configMapEnqueuer) OnDelete(any)          {}
func (h configMapEnqueuer) enqueue(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		h.q.Add(key)
	}
}

func liveGet(t *testing.T, c *http.Client, method, url string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, res.Header, string(b)
}

func liveState(t *testing.T, url string) livepage.Process {
	t.Helper()
	code, _, body := liveGet(t, http.DefaultClient, http.MethodGet, url+"api/state", nil)
	require.Equal(t, http.StatusOK, code, body)
	var st livepage.ProcessState
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	return st.Process
}

func findInformer(p livepage.Process, handler string) (livepage.ProcessInformer, bool) {
	i := slices.IndexFunc(p.Informers, func(i livepage.ProcessInformer) bool {
		return slices.ContainsFunc(i.Handlers, func(h livepage.ProcessHandler) bool { return strings.Contains(h.Name, handler) })
	})
	if i < 0 {
		return livepage.ProcessInformer{}, false
	}
	return p.Informers[i], true
}

// A controller on the embedded API server: a dropin ConfigMap informer, a
// handler of the user's type putting keys on a traced queue, a worker.
// The live view mounted under a prefix on the user's mux names the
// informer's type, the handler's type name and the queue's name, with the
// counts; once the informer and the queue stop, they are gone from it.
func TestLiveViewHandlerShowsTheProcessControllers(t *testing.T) {
	srv := startServer(t, configMaps("ns", "a", "b", "c")...)
	tp := sdktrace.NewTracerProvider()
	inf := dropin.NewSharedIndexInformer(srv.ListerWatcher(apiserver.ConfigMaps, metav1.NamespaceAll), &corev1.ConfigMap{}, 0, cache.Indexers{})
	q := dropin.NewTracedQueue("liveview-test-configmaps", workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()))
	q.(*dropin.TracedQueue[string]).SetTracerProvider(tp) // the queue counts while tracing
	_, err := inf.AddEventHandler(configMapEnqueuer{q})
	require.NoError(t, err)

	mux := http.NewServeMux()
	mux.Handle("/debug/informers/", dropin.LiveViewHandler())
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	url := hs.URL + "/debug/informers/"

	// The first request, the stream, is refused: the reflector falls back
	// to a LIST, and the page says so (the reason and the fallback).
	srv.Inject(apiserver.Fault{Verb: "watch", Status: http.StatusInternalServerError})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { inf.RunWithContext(ctx) })
	var mu sync.Mutex
	var reconciled []string
	wg.Go(func() {
		for {
			key, shutdown := q.Get()
			if shutdown {
				return
			}
			mu.Lock()
			reconciled = append(reconciled, key)
			mu.Unlock()
			q.Forget(key)
			q.Done(key)
		}
	})
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			q.ShutDown()
			wg.Wait()
		}
	}
	t.Cleanup(stop)

	testutil.Eventually(t, "the three ConfigMaps reconciled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(reconciled) == 3
	})
	var got livepage.ProcessInformer
	testutil.Eventually(t, "the page shows the informer synced with its handler's three calls", func() bool {
		var ok bool
		got, ok = findInformer(liveState(t, url), "configMapEnqueuer")
		return ok && got.Synced && len(got.Handlers) == 1 && got.Handlers[0].Calls == 3 && got.Handlers[0].Synced
	})
	assert.Equal(t, "*v1.ConfigMap", got.Type)
	assert.True(t, got.Started)
	assert.Equal(t, 3, got.Cached)
	assert.Equal(t, uint64(3), got.HandleDeltas)
	assert.Equal(t, "realfifo", got.QueueKind)
	assert.NotEmpty(t, got.ResourceVersion)
	r := got.Reflector
	require.GreaterOrEqual(t, len(r.Requests), 3, "%+v", r)
	assert.Equal(t, livepage.ProcessRequest{Verb: "STREAM", Outcome: "500 InternalError"}, r.Requests[0], "the refused stream and its reason")
	assert.Equal(t, livepage.ProcessRequest{Verb: "LIST", ResourceVersion: "0", Objects: 3}, r.Requests[1], "the fallback")
	assert.Equal(t, "WATCH", r.Requests[2].Verb)
	assert.Equal(t, []any{"list", 3, 1, 1}, []any{r.Fetched, r.Listed, r.Streams, r.Lists})
	assert.Equal(t, int64(-1), r.SinceEventMillis, "no watch event yet")
	h := got.Handlers[0]
	assert.Contains(t, h.Name, "dropin_test.configMapEnqueuer", "the handler by its type's name")
	assert.Zero(t, h.Pending)
	assert.Positive(t, h.MaxMicros)

	// A change: the watch delivers it, and the page says when.
	_, err = srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d"}})
	require.NoError(t, err)
	testutil.Eventually(t, "the page shows the watch event", func() bool {
		got, _ = findInformer(liveState(t, url), "configMapEnqueuer")
		return got.Reflector.WatchEvents == 1 && got.Reflector.SinceEventMillis >= 0 && got.Reflector.Phase == "WATCH"
	})
	testutil.Eventually(t, "the fourth key reconciled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(reconciled) == 4
	})

	p := liveState(t, url)
	qi := slices.IndexFunc(p.Queues, func(q livepage.ProcessQueue) bool { return q.Name == "liveview-test-configmaps" })
	require.GreaterOrEqual(t, qi, 0, "the queue by its name: %+v", p.Queues)
	wq := p.Queues[qi]
	assert.Equal(t, livepage.ProcessQueue{Name: "liveview-test-configmaps", Kind: "rate-limiting", Adds: 4, Reconciles: 4,
		MeanMicros: wq.MeanMicros, LastMicros: wq.LastMicros}, wq)

	// The page itself: the same files as the demo's, relative to the mount.
	code, hdr, page := liveGet(t, http.DefaultClient, http.MethodGet, url, nil)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, page, `src="app.js"`)
	assert.Equal(t, "DENY", hdr.Get("X-Frame-Options"))
	assert.Contains(t, hdr.Get("Content-Security-Policy"), "default-src 'none'")
	code, _, js := liveGet(t, http.DefaultClient, http.MethodGet, url+"app.js", nil)
	require.Equal(t, http.StatusOK, code)
	assert.True(t, strings.Contains(js, "function drawProcess("), "the script draws a process's state")
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	code, hdr, _ = liveGet(t, noFollow, http.MethodGet, hs.URL+"/debug/informers", nil)
	// The mux redirects the bare prefix itself (a handler mounted
	// without a subtree pattern does the same): the page's relative URLs
	// resolve under the slash.
	assert.Contains(t, []int{http.StatusMovedPermanently, http.StatusTemporaryRedirect}, code)
	assert.Equal(t, "/debug/informers/", hdr.Get("Location"))

	stop()
	p = liveState(t, url)
	_, ok := findInformer(p, "configMapEnqueuer")
	assert.False(t, ok, "a stopped informer is gone")
	assert.False(t, slices.ContainsFunc(p.Queues, func(q livepage.ProcessQueue) bool { return q.Name == "liveview-test-configmaps" }), "a shut-down queue is gone")
}

// Read-only: anything but GET and HEAD is 405, and no endpoint changes
// anything. A request addressed to another name (DNS rebinding) is
// refused as the demo's page refuses it, 403, with the page's headers; a
// loopback name is served on any port (a port-forward's).
func TestLiveViewHandlerIsReadOnlyAndChecksHost(t *testing.T) {
	hs := httptest.NewServer(dropin.LiveViewHandler())
	t.Cleanup(hs.Close)
	port := hs.URL[strings.LastIndexByte(hs.URL, ':')+1:]
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		for _, p := range []string{"/", "/api/state", "/api/control/burst"} {
			code, hdr, body := liveGet(t, http.DefaultClient, m, hs.URL+p, nil)
			assert.Equal(t, http.StatusMethodNotAllowed, code, "%s %s: %s", m, p, body)
			assert.Equal(t, "GET, HEAD", hdr.Get("Allow"))
		}
	}
	code, _, _ := liveGet(t, http.DefaultClient, http.MethodPost, hs.URL+"/api/state", map[string]string{"Sec-Fetch-Site": "cross-site"})
	assert.Equal(t, http.StatusForbidden, code, "a cross-site POST is refused before anything else, as on the demo's page")
	for _, host := range []string{"evil.example:" + port, "evil.example:1", "10.1.2.3:" + port} {
		code, hdr, body := liveGet(t, http.DefaultClient, http.MethodGet, hs.URL+"/api/state", map[string]string{"Host": host})
		assert.Equal(t, http.StatusForbidden, code, "Host %s: %s", host, body)
		assert.Equal(t, "DENY", hdr.Get("X-Frame-Options"))
		assert.NotContains(t, body, "informers", "Host %s: no state", host)
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LocalHost.:" + port, "127.0.0.2:" + port, "localhost:1", "[::1]:9999"} {
		code, _, body := liveGet(t, http.DefaultClient, http.MethodGet, hs.URL+"/api/state", map[string]string{"Host": host})
		assert.Equal(t, http.StatusOK, code, "Host %s: %s", host, body)
	}
	code, _, body := liveGet(t, http.DefaultClient, http.MethodGet, hs.URL+"/api/controls", nil)
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "read-only")
	code, _, _ = liveGet(t, http.DefaultClient, http.MethodGet, hs.URL+"/api/trace/0123", nil)
	assert.Equal(t, http.StatusBadRequest, code, "not a trace ID")
	code, _, _ = liveGet(t, http.DefaultClient, http.MethodGet, hs.URL+"/api/nothing", nil)
	assert.Equal(t, http.StatusNotFound, code)
}

// Why did this run: with dropin.LiveViewSpanProcessor on the tracer
// provider, the page lists the reconciles (by queue and key), and the
// trace of one holds the chain behind it: the watch event's root, the
// handler's call, the add, the wait and the reconcile itself.
func TestLiveViewWhyDidThisRun(t *testing.T) {
	srv := startServer(t)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(dropin.LiveViewSpanProcessor()))
	startController(t, srv, "", "why-configmaps", tp)
	hs := httptest.NewServer(dropin.LiveViewHandler())
	t.Cleanup(hs.Close)
	_, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "why"}})
	require.NoError(t, err)

	var st livepage.ProcessState
	var rec livepage.Reconcile
	testutil.Eventually(t, "the reconcile of ns/why listed", func() bool {
		_, _, body := liveGet(t, http.DefaultClient, http.MethodGet, hs.URL+"/api/state", nil)
		st = livepage.ProcessState{}
		require.NoError(t, json.Unmarshal([]byte(body), &st))
		i := slices.IndexFunc(st.Reconciles, func(r livepage.Reconcile) bool { return r.Key == "ns/why" && r.Queue == "why-configmaps" })
		if i >= 0 {
			rec = st.Reconciles[i]
		}
		return i >= 0
	})
	assert.True(t, st.Spans)
	assert.True(t, slices.ContainsFunc(st.Events, func(e livepage.Event) bool { return e.Key == "ns/why" && e.Type == "ADDED" }), "the event list")
	code, _, body := liveGet(t, http.DefaultClient, http.MethodGet, hs.URL+"/api/trace/"+rec.TraceID, nil)
	require.Equal(t, http.StatusOK, code, body)
	var wf livepage.Waterfall
	require.NoError(t, json.Unmarshal([]byte(body), &wf))
	var names []string
	for _, s := range wf.Spans {
		names = append(names, s.Name)
	}
	for _, want := range []string{"ListAndWatch watch", "workqueue.add", "workqueue.queued", "workqueue.process"} {
		assert.Contains(t, names, want, "the chain behind the reconcile: %v", names)
	}
	assert.True(t, slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "OnAdd") }), "the handler's call: %v", names)
	code, _, _ = liveGet(t, http.DefaultClient, http.MethodGet, hs.URL+"/api/trace/00000000000000000000000000000001", nil)
	assert.Equal(t, http.StatusNotFound, code)
	code, _, _ = liveGet(t, http.DefaultClient, http.MethodGet, hs.URL+"/api/trace/nope", nil)
	assert.Equal(t, http.StatusBadRequest, code)
}

// A queue's retries (AddRateLimited calls) and its longest running key:
// a key taken by Get and not yet Done shows as in flight, for as long as
// it has been; once Done, nothing is running.
func TestLiveViewQueueRetriesAndLongestRunning(t *testing.T) {
	q := tracedQueueOn[string](t, "retries-longest", sdktrace.NewTracerProvider())
	h := dropin.LiveViewHandler()
	queue := func() livepage.ProcessQueue {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/state", nil))
		require.Equal(t, http.StatusOK, w.Code)
		var st livepage.ProcessState
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &st))
		i := slices.IndexFunc(st.Process.Queues, func(q livepage.ProcessQueue) bool { return q.Name == "retries-longest" })
		require.GreaterOrEqual(t, i, 0)
		return st.Process.Queues[i]
	}
	q.Add("k")
	k, _ := q.Get()
	q.AddRateLimited("x")
	q.AddRateLimited("x")
	testutil.Eventually(t, "the key in flight for some time", func() bool { got := queue(); return got.LongestMicros > 0 })
	got := queue()
	assert.Equal(t, uint64(2), got.Retries)
	assert.Equal(t, 1, got.InFlight)
	q.Done(k)
	got = queue()
	assert.Zero(t, got.InFlight)
	assert.Zero(t, got.LongestMicros, "nothing running")
}
