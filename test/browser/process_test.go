//go:build browser

package browser

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

// browserConfigMapHandler is the user's handler type the page names.
type browserConfigMapHandler struct {
	q workqueue.TypedInterface[string]
}

func (h browserConfigMapHandler) OnAdd(obj any, _ bool) { h.add(obj) }
func (h browserConfigMapHandler) OnUpdate(_, obj any)   { h.add(obj) }
func (h browserConfigMapHandler) OnDelete(any)          {}
func (h browserConfigMapHandler) add(obj any) {
	if k, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		h.q.Add(k)
	}
}

// heldLine is the informer's estimate of its cache's bytes, as the page
// writes it ("≈ 240 B held"): the handler, made after the informer synced,
// sized its two objects.
var heldLine = regexp.MustCompile(`≈ [1-9][0-9.]* (B|KiB) held`)

// The live view of a user's own process (dropin.LiveViewHandler, mounted
// under a prefix on the user's mux) in Chromium: the same page as the
// demo's draws the process's ConfigMap informer with its handler by name
// and the traced queue by name, the bytes its cache holds and its last
// relist, read-only (the demo's pipeline, controls
// and events are not shown), with no error in the console under the
// page's content security policy.
func TestLiveViewOfAProcessInChromium(t *testing.T) {
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	for _, n := range []string{"a", "b"} {
		_, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: n}})
		require.NoError(t, err)
	}
	inf := dropin.NewSharedIndexInformer(srv.ListerWatcher(apiserver.ConfigMaps, metav1.NamespaceAll), &corev1.ConfigMap{}, 0, cache.Indexers{})
	q := dropin.NewTracedQueue("browser-configmaps", workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(dropin.LiveViewSpanProcessor()))
	require.NoError(t, inf.(*dropin.Informer).SetTracerProvider(tp))
	q.(*dropin.TracedQueue[string]).SetTracerProvider(tp)
	_, err = inf.AddEventHandler(browserConfigMapHandler{q})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { inf.RunWithContext(ctx) })
	wg.Go(func() {
		for {
			k, shutdown := q.Get()
			if shutdown {
				return
			}
			q.Forget(k)
			q.Done(k)
		}
	})
	t.Cleanup(func() { cancel(); q.ShutDown(); wg.Wait() })

	mux := http.NewServeMux()
	// Opted in: the page shows the trace-one-key form.
	mux.Handle("/debug/informers/", dropin.LiveViewHandler(dropin.LiveViewTraceOneKey()))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)

	browser := openTab(t)
	tab := browser.ctx
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, cancel := context.WithTimeout(tab, waitTimeout)
		defer cancel()
		require.NoError(t, chromedp.Do(c, actions...), what)
	}
	eval := func(expr string) string {
		t.Helper()
		c, cancel := context.WithTimeout(tab, waitTimeout)
		defer cancel()
		v, err := chromedp.Run(c, chromedp.Evaluate[string](expr))
		require.NoError(t, err, expr)
		return v
	}
	// The bare prefix, as a user types it: redirected to the page.
	run("open the live view", chromedp.Navigate(hs.URL+"/debug/informers"))
	deadline := time.Now().Add(waitTimeout)
	var text string
	for {
		text = eval(`document.body ? document.body.innerText : ""`)
		if strings.Contains(text, "browser.browserConfigMapHandler#0") && strings.Contains(text, "browser-configmaps") &&
			strings.Contains(text, "synced") && strings.Contains(text, "2 objects cached") &&
			heldLine.MatchString(text) && strings.Contains(text, "last relist: start") {
			break
		}
		require.False(t, time.Now().After(deadline), "the page never drew the process: %q", text)
		time.Sleep(50 * time.Millisecond)
	}
	assert.Contains(t, text, "*v1.ConfigMap")
	// The reflector's conversation, in the words of the demo's box: the
	// stream that fetched the state, its bookmark, the watch it became.
	assert.Contains(t, text, "reflector WATCH")
	assert.Regexp(t, `initial state: 2 objects streamed, bookmark at rv \d+`, text)
	assert.Regexp(t, `STREAM from the latest · 2 objects · bookmark rv \d+`, text)
	assert.Contains(t, text, "rate-limiting")
	assert.Equal(t, "true,true,false", eval(`[!!document.getElementById("pipeline").hidden, !!document.getElementById("controls-box").hidden,
		!!document.getElementById("process").hidden].join()`),
		"the demo's pipeline and controls hidden, the process shown")
	assert.Equal(t, "browser-configmaps", eval(`document.querySelector("#process-queues tbody tr").dataset.queue`))
	assert.Equal(t, "2", eval(`document.querySelector("#process-queues tbody tr").cells[3].textContent`), "two adds")
	// Why did this run: a click on the reconcile of ns/a opens its trace.
	assert.Equal(t, "false,false", eval(`[!!document.getElementById("reconciles-box").hidden, !!document.getElementById("events-box").hidden].join()`))
	run("click the reconcile of ns/a", chromedp.Click(chromedp.CSS(`#reconciles tbody tr[data-key="ns/a"]`), chromedp.NodeVisible))
	deadline = time.Now().Add(waitTimeout)
	for {
		got := eval(`[...document.querySelectorAll("#waterfall details")].map((d) => d.dataset.span).join(",")`)
		if strings.Contains(got, "workqueue.process") && strings.Contains(got, "ListAndWatch") {
			break
		}
		require.False(t, time.Now().After(deadline), "the waterfall never showed the chain: %q", got)
		time.Sleep(50 * time.Millisecond)
	}
	// The plots: one per metric, titled with its name, a line per series
	// once two samples (a second apart) are in.
	deadline = time.Now().Add(waitTimeout)
	for {
		got := eval(`[...document.querySelectorAll("#plots .plot")].filter((p) => p.querySelector("path")).map((p) => p.querySelector("h3").textContent + "=" + p.querySelector("path").dataset.series).join(",")`)
		if strings.Contains(got, "workqueue_depth=browser-configmaps") && strings.Contains(got, "informer_queued_items=") {
			break
		}
		require.False(t, time.Now().After(deadline), "the plots never drew the queue's depth: %q", got)
		time.Sleep(100 * time.Millisecond)
	}
	assert.Equal(t, "informer_queued_items,informer_handler_pending_notifications,informer_handler_processing_latency_seconds,workqueue_depth,workqueue_adds_total,workqueue_work_duration_seconds",
		eval(`[...document.querySelectorAll("#plots .plot h3")].map((h) => h.textContent).join(",")`), "one plot per metric, titled with its name")
	// Trace one key, from the form: Chromium's own POST (same origin) is
	// served; of two new ConfigMaps only the chosen one's event is
	// listed (the other started no trace); "trace as before" restores.
	t.Cleanup(func() {
		if res, err := http.Post(hs.URL+"/debug/informers/api/trace-key?key=", "", nil); err == nil {
			res.Body.Close()
		}
	})
	run("type a key", chromedp.SendKeys(chromedp.CSS("#tracekey-input"), "ns/only", chromedp.NodeVisible))
	run("trace only it", chromedp.Click(chromedp.CSS("#tracekey-set"), chromedp.NodeVisible))
	waitText := func(what, expr, want string) {
		t.Helper()
		deadline := time.Now().Add(waitTimeout)
		for {
			got := eval(expr)
			if strings.Contains(got, want) {
				return
			}
			require.False(t, time.Now().After(deadline), "%s: %q", what, got)
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitText("the key taken", `document.getElementById("tracekey-note").textContent`, "only ns/only starts a trace")
	for _, n := range []string{"other", "only"} {
		_, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: n}})
		require.NoError(t, err)
	}
	waitText("ns/only's event listed", `[...document.querySelectorAll("#events tbody tr")].map((r) => r.dataset.key).join(",")`, "ns/only")
	waitText("ns/only's reconcile listed", `[...document.querySelectorAll("#reconciles tbody tr")].map((r) => r.dataset.key).join(",")`, "ns/only")
	waitText("both reconciled (the queue counts untraced keys too)", `document.querySelector("#process-queues tbody tr").cells[5].textContent`, "4")
	assert.NotContains(t, eval(`[...document.querySelectorAll("#events tbody tr, #reconciles tbody tr")].map((r) => r.dataset.key).join(",")`), "ns/other",
		"an object the chosen key leaves out starts no trace")
	c, cancelShot := context.WithTimeout(tab, waitTimeout)
	defer cancelShot()
	shot, err := chromedp.Run(c, chromedp.FullScreenshot(100)) // 100: PNG
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(screenshotDir(), 0o755))
	path := filepath.Join(screenshotDir(), "process-page.png")
	require.NoError(t, os.WriteFile(path, shot, 0o644))
	t.Logf("screenshot: %s", path)
	run("trace as before", chromedp.Click(chromedp.CSS("#tracekey-clear"), chromedp.NodeVisible))
	waitText("the key cleared", `document.getElementById("tracekey-result").textContent`, "tracing restored")
	assert.Empty(t, browser.consoleErrors(), "the page ran without errors")
}
