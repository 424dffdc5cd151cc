//go:build browser

package browser

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informer-anatomy/informer-anatomy/demo/demoproc"
)

// startControllerRuntimeExample builds examples/controller-runtime (a
// module of its own: go build in its folder, the binary in the test's
// temporary folder) and runs it as a user does, on namespace ns of the
// cluster at kubeconfig, with its metrics server, and so its live view, on
// a free loopback port. It returns the live view's URL; the process gets
// Ctrl-C when the test ends, and its output is logged.
func startControllerRuntimeExample(t *testing.T, kubeconfig, ns string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "controller-runtime-example")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join(repoRoot(), "examples", "controller-runtime")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build examples/controller-runtime:\n%s", out)

	// A port the kernel just gave and took back: the example binds it
	// itself, as a user's --metrics-bind-address names one.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	var output demoproc.LockedBuffer // the process's output, from two pipes
	cmd := exec.Command(bin, "--kubeconfig", kubeconfig, "--namespace", ns, "--metrics-bind-address", addr, "--exporter", "none")
	cmd.Stdout, cmd.Stderr = &output, &output
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			assert.NoError(t, err, "the example exits 0 on Ctrl-C")
		case <-time.After(waitTimeout):
			_ = cmd.Process.Kill()
			t.Errorf("the example did not stop on Ctrl-C")
		}
		t.Logf("controller-runtime example output:\n%s", output.String())
	})

	url := "http://" + addr + "/debug/informers/"
	deadline := time.Now().Add(waitTimeout)
	for {
		res, err := http.Get(url + "api/state")
		if err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return url
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("the example exited (%v) before serving its live view:\n%s", err, output.String())
		default:
		}
		require.False(t, time.Now().After(deadline), "the example's live view never answered at %s:\n%s", url, output.String())
		time.Sleep(100 * time.Millisecond)
	}
}

// The live view served by examples/controller-runtime (the manager's
// metrics server, ExtraHandlers) on the real kube-apiserver, in Chromium:
// the manager's ConfigMap informer with its two handlers (the controller's
// For, and controller-runtime's read-your-writes handler), the
// controller's priority queue by its name, a reconcile of the watched
// ConfigMap listed under "why did this run" whose trace opens on a click
// (from the watch event's root to workqueue.process), and the plots of the
// informer's and the queue's metrics.
func TestControllerRuntimeExampleLiveViewInChromium(t *testing.T) {
	kubeconfig, client, ns := clusterNamespace(t, "browser-cr")
	watched := func(name string) {
		t.Helper()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"example.informer-anatomy.io/watch": "true"}},
			Data: map[string]string{"v": "0"}}
		require.NoError(t, client.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(context.Background()).Error())
	}
	watched("app")
	url := startControllerRuntimeExample(t, kubeconfig, ns)

	browser := openTab(t)
	tab := browser.ctx
	removeScreenshots("controller-runtime")
	shoot := func(step string) {
		t.Helper()
		c, cancel := context.WithTimeout(tab, waitTimeout)
		defer cancel()
		b, err := chromedp.Run(c, chromedp.FullScreenshot(100)) // 100: PNG
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(screenshotDir(), 0o755))
		path := filepath.Join(screenshotDir(), "controller-runtime-"+step+".png")
		require.NoError(t, os.WriteFile(path, b, 0o644))
		t.Logf("screenshot: %s", path)
	}
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, cancel := context.WithTimeout(tab, waitTimeout)
		defer cancel()
		if err := chromedp.Do(c, actions...); err != nil {
			shoot("FAILED")
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		c, cancel := context.WithTimeout(tab, waitTimeout)
		defer cancel()
		v, err := chromedp.Run(c, chromedp.Evaluate[string](expr))
		require.NoError(t, err, expr)
		return v
	}
	waitFor := func(what, expr string, ok func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(waitTimeout)
		for {
			got := eval(expr)
			if ok(got) {
				return got
			}
			if time.Now().After(deadline) {
				shoot("FAILED")
				t.Fatalf("%s: never; last %q", what, got)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	run("open the live view", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(url))
	// The informer: the manager's cache built it with
	// dropin.NewSharedIndexInformer; its handlers by name.
	handlers := waitFor("the ConfigMap informer synced, with the controller's handler", `(() => {
		const box = [...document.querySelectorAll("#process-informers .informer")].find((b) => b.querySelector("h2").textContent.includes("*v1.ConfigMap"));
		if (!box || !box.textContent.includes("synced")) return "";
		return [...box.querySelectorAll("tbody tr")].map((r) => r.dataset.listener + "=" + r.cells[3].textContent).join("\n");
	})()`, func(s string) bool { return strings.Contains(s, "TypedEnqueueRequestForObject") })
	t.Logf("the informer's handlers (name=calls):\n%s", handlers)
	lines := strings.Split(handlers, "\n")
	require.Len(t, lines, 2, "For's handler and read-your-writes' handler: %q", handlers)
	assert.Contains(t, handlers, "sigs.k8s.io/controller-runtime/pkg/handler.TypedEnqueueRequestForObject#", "For(&ConfigMap{})'s handler by its type")
	assert.Contains(t, handlers, "sigs.k8s.io/controller-runtime/pkg/client/internal/consistencyhandler.ConsistencyHandler#",
		"read-your-writes' handler (EnableReadYourWritesConsistency) by its type")
	// The queue: NewQueue's traced priority queue, by the controller's name.
	waitFor("the controller's queue", `(() => {
		const r = document.querySelector('#process-queues tbody tr[data-queue="configmap-status"]');
		return r ? r.cells[1].textContent : "";
	})()`, func(s string) bool { return s == "priority" })

	// A change while the page is open: its reconcile is listed; a click
	// opens why it ran.
	watched("web")
	key := ns + "/web"
	waitFor("the reconcile of "+key+" listed", `document.querySelector('#reconciles tbody tr[data-key="`+key+`"]') ? "yes" : ""`,
		func(s string) bool { return s == "yes" })
	shoot("1-process")
	run("click the reconcile of "+key, chromedp.Click(chromedp.CSS(`#reconciles tbody tr[data-key="`+key+`"]`), chromedp.NodeVisible))
	chain := waitFor("the reconcile's trace", `[...document.querySelectorAll("#waterfall details")].map((d) => d.dataset.span).join(",")`,
		func(s string) bool {
			return strings.Contains(s, "workqueue.process") && strings.Contains(s, "ListAndWatch")
		})
	assert.Contains(t, chain, "workqueue.add")
	assert.Contains(t, eval(`document.getElementById("waterfall-title").textContent`), key)
	shoot("2-why")

	// The plots. Once the page has a first sample (the gauges' lines), a
	// new watched ConfigMap is added and reconciled after it: a later
	// sample plots its add as a rate above zero and its reconcile's time.
	plot := func(metric string) string {
		return `[...document.querySelectorAll('#plots .plot[data-metric="` + metric + `"] path')].map((l) => l.dataset.series + "=" + l.dataset.max).join("|")`
	}
	waitFor("the first sample of the informer's and the queue's gauges", plot("workqueue_depth")+` + ";" + `+plot("informer_queued_items"),
		func(s string) bool {
			return strings.Contains(s, "configmap-status=0") && strings.Contains(s, "*v1.ConfigMap=0")
		})
	watched("db")
	adds := waitFor("a rate of adds above zero", plot("workqueue_adds_total"), func(s string) bool {
		return strings.HasPrefix(s, "configmap-status=") && s != "configmap-status=0"
	})
	t.Logf("workqueue_adds_total: %s", adds)
	waitFor("the reconcile's time plotted", plot("workqueue_work_duration_seconds"), func(s string) bool { return strings.HasPrefix(s, "configmap-status=") })
	pending := eval(plot("informer_handler_pending_notifications"))
	assert.Contains(t, pending, "*v1.ConfigMap · sigs.k8s.io/controller-runtime/pkg/handler.TypedEnqueueRequestForObject#")
	assert.Contains(t, pending, "consistencyhandler.ConsistencyHandler#", "a line per handler")
	// Five seconds of points, for a picture with lines rather than dots.
	waitFor("five points of the queue's depth", `(document.querySelector('#plots .plot[data-metric="workqueue_depth"] path') || {dataset: {}}).dataset.points || "0"`,
		func(s string) bool { n, err := strconv.Atoi(s); return err == nil && n >= 5 })
	shoot("3-plots")
	assert.Empty(t, browser.consoleErrors(), "the page ran without errors")
}
