//go:build browser

package browser

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/informer-anatomy/informer-anatomy/demo/demoproc"
	"github.com/informer-anatomy/informer-anatomy/demo/demoproc/demoproctest"
	"github.com/informer-anatomy/informer-anatomy/internal/kube"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "copy the live view's screenshot to docs/img/liveview.png")

// chromiumEnv names the browser binary; hack/test.sh sets it from
// hack/chromium.sh.
const chromiumEnv = "INFORMER_ANATOMY_CHROMIUM"

// waitTimeout bounds every wait for the page: generous, since the machine
// may be busy; a wait ends as soon as its condition holds.
const waitTimeout = 60 * time.Second

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// chromium is the browser to drive. A missing browser fails the test: the
// feature under test is what a browser shows, and a skip would pass CI
// without it.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(chromiumEnv); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome-stable", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatalf("no Chromium: run hack/chromium.sh path (it installs Debian's chromium as root) and set %s to the path it prints", chromiumEnv)
	return ""
}

// startDemo runs `trace-demo --ui --ui-addr 127.0.0.1:0` as a user runs
// it, and logs its output when the test ends.
func startDemo(t *testing.T, args ...string) *demoproc.Proc {
	t.Helper()
	// --duration: a test that dies without its cleanup leaves no demo
	// running for long.
	d := demoproctest.Start(t, waitTimeout, demoproctest.Build(t), append([]string{"--duration", "10m"}, args...)...)
	t.Cleanup(func() {
		_, _ = d.Stop()
		t.Logf("trace-demo %s output:\n%s", strings.Join(args, " "), d.Output())
	})
	// Port 0 is the kernel's choice: the printed URL must carry the real
	// port, or nobody could open the page.
	m := regexp.MustCompile(`^http://127\.0\.0\.1:(\d+)/$`).FindStringSubmatch(d.URL)
	require.NotNil(t, m, "the live view's URL %q is http://127.0.0.1:<port>/", d.URL)
	require.NotEqual(t, "0", m[1], "the URL names the bound port")
	return d
}

// stopDemo presses Ctrl-C, as a user does, and returns the exit code.
func stopDemo(t *testing.T, d *demoproc.Proc) int {
	t.Helper()
	code, err := d.Stop()
	require.NoError(t, err, "trace-demo output:\n%s", d.Output())
	return code
}

// tab is one tab of a headless Chromium that ends with the test, and the
// errors and uncaught exceptions its pages report: every test here opens
// one, whatever page it then drives.
type tab struct {
	ctx context.Context // actions run with a timeout derived from it

	mu      sync.Mutex
	console []string // guarded by mu
}

// openTab starts a headless Chromium with a 1280x800 window (and extra
// options) and opens a tab, both ended when t ends.
func openTab(t *testing.T, extra ...chromedp.ExecAllocatorOption) *tab {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.WindowSize(1280, 800))
	opts = append(opts, extra...)
	if os.Geteuid() == 0 {
		// Chromium refuses to run as root inside its sandbox (CI containers).
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	b := &tab{ctx: ctx}
	// Subscribing starts the browser (without a timeout: a timeout on the
	// first call would end the browser with it).
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				b.mu.Lock()
				b.console = append(b.console, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line))
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// consoleErrors is what the tab's pages reported as errors so far.
func (b *tab) consoleErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.console)
}

// removeScreenshots removes the screenshots named prefix-*.png of an
// earlier run, which would mislead.
func removeScreenshots(prefix string) {
	old, _ := filepath.Glob(filepath.Join(screenshotDir(), prefix+"-*.png"))
	for _, f := range old {
		_ = os.Remove(f)
	}
}

// page is one browser tab on the live view.
type page struct {
	*tab
	t    *testing.T
	name string // prefix of this page's screenshots
	demo *demoproc.Proc
}

// openPage starts a headless Chromium with a 1280x800 window (and extra
// options) and opens url.
func openPage(t *testing.T, d *demoproc.Proc, name string, extra ...chromedp.ExecAllocatorOption) *page {
	t.Helper()
	p := &page{tab: openTab(t, extra...), t: t, name: name, demo: d}
	removeScreenshots(name)
	// 1280x800 exactly (the window's size leaves less for the page).
	p.do("open "+d.URL, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(d.URL))
	return p
}

// do runs actions on the tab, failing the test (with a screenshot) on error.
func (p *page) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, waitTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.failed(what, err)
	}
}

func (p *page) failed(what string, err error) {
	p.t.Helper()
	p.screenshot("FAILED", true)
	p.t.Fatalf("%s: %v\ndemo output so far:\n%s", what, err, p.demo.Output())
}

// screenshotDir is where a developer finds the screenshots (git-ignored).
func screenshotDir() string { return filepath.Join(repoRoot(), "_output", "screenshots") }

// screenshot writes _output/screenshots/<page>-<step>.png, the whole page
// or the 1280x800 window, logs its path and returns it.
func (p *page) screenshot(step string, full bool) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, waitTimeout)
	defer cancel()
	shot := chromedp.CaptureScreenshot()
	if full {
		shot = chromedp.FullScreenshot(100) // 100: PNG
	}
	b, err := chromedp.Run(ctx, shot)
	if err != nil {
		p.t.Errorf("screenshot %s: %v", step, err)
		return ""
	}
	dir := screenshotDir()
	path := filepath.Join(dir, p.name+"-"+step+".png")
	if err = os.MkdirAll(dir, 0o755); err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		p.t.Errorf("screenshot %s: %v", step, err)
		return ""
	}
	abs, _ := filepath.Abs(path)
	p.t.Logf("screenshot: %s", abs)
	return abs
}

// listenerRow is one listener as the page draws it.
type listenerRow struct {
	Name       string   `json:"name"`
	Stages     []string `json:"stages"` // the visible boxes, in order
	AddCh      int      `json:"addCh"`
	Pending    int      `json:"pending"`
	PendingHot bool     `json:"pendingBusy"` // drawn orange
	Handler    string   `json:"handler"`     // "N calls · mean … · max …"
	// Workqueue and Reconcile are a controller handler's extra boxes
	// ("" on other rows).
	Workqueue string `json:"workqueue"`
	Reconcile string `json:"reconcile"`
}

var callsRe = regexp.MustCompile(`^(\d+) calls · mean \S+ [µm]?s · max \S+ [µm]?s$`)

// calls is the handler box's call count, -1 if the text is not as drawn.
func (l listenerRow) calls() int {
	m := callsRe.FindStringSubmatch(l.Handler)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// shown is what the page shows, read from the DOM (what a person reads on
// it), not from the data endpoint.
type shown struct {
	Source        string        `json:"source"`
	Status        string        `json:"status"`
	Probed        bool          `json:"probed"` // the reflector's request counters shown
	Phase         string        `json:"phase"`
	RV            string        `json:"rv"`
	Streams       int           `json:"streams"`
	Lists         int           `json:"lists"`
	Watches       int           `json:"watches"`
	WatchErrors   int           `json:"watchErrors"`
	Requests      []string      `json:"requests"` // the reflector box's last requests, oldest first
	Stream        string        `json:"stream"`   // the reflector box's line on the initial state
	QueueKind     string        `json:"queueKind"`
	QueueDepth    int           `json:"queueDepth"`
	HandleDeltas  int           `json:"handleDeltas"`
	Indexer       int           `json:"indexer"`
	Held          string        `json:"held"`   // the Indexer box's bytes line ("≈ 1.2 KiB held")
	Relist        string        `json:"relist"` // the Reflector box's last relist line
	Stages        []string      `json:"stages"` // visible pipeline boxes
	Arrows        int           `json:"arrows"`
	Listeners     []listenerRow `json:"listeners"`
	Events        [][]string    `json:"events"` // type, key, rv, handlers, total
	Controls      []string      `json:"controls"`
	ControlsText  string        `json:"controlsText"`
	ControlResult string        `json:"controlResult"`
}

const readPage = `(() => {
  const $ = (id) => document.getElementById(id);
  const t = (id) => $(id).textContent;
  const n = (id) => Number(t(id));
  const visible = (e) => !!e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
  return {
    source: t("source"), status: t("status"),
    probed: visible($("reflector-counts")) && !visible($("reflector-unprobed")),
    phase: t("reflector-phase"), rv: t("reflector-rv"), streams: n("reflector-streams"), lists: n("reflector-lists"), watches: n("reflector-watches"), watchErrors: n("reflector-errors"),
    stream: t("reflector-stream"),
    requests: [...document.querySelectorAll("#reflector-requests li")].map((li) => li.textContent),
    queueKind: t("queue-kind"), queueDepth: n("queue-depth"), handleDeltas: n("handledeltas"), indexer: n("indexer"),
    held: t("indexer-held"), relist: t("reflector-relist"),
    stages: [...document.querySelectorAll("#pipeline .stage[id]")].filter(visible).map((e) => e.id),
    arrows: [...document.querySelectorAll("#pipeline > .arrow")].filter(visible).length,
    listeners: [...document.querySelectorAll("#listeners .listener")].map((r) => ({
      name: r.dataset.listener,
      stages: [...r.querySelectorAll(".stage")].filter(visible).map((s) => s.dataset.k),
      addCh: Number(r.querySelector('[data-k="addCh"] .v').textContent),
      pending: Number(r.querySelector('[data-k="pending"] .v').textContent),
      pendingBusy: r.querySelector('[data-k="pending"]').classList.contains("busy"),
      handler: r.querySelector('[data-k="handler"] .v').textContent,
      workqueue: r.querySelector('[data-k="workqueue"] .v')?.textContent ?? "",
      reconcile: r.querySelector('[data-k="reconcile"] .v')?.textContent ?? "",
    })),
    events: [...document.querySelectorAll("#events tbody tr")].filter(visible).map((tr) => [...tr.cells].map((c) => c.textContent)),
    controls: [...document.querySelectorAll("#controls button")].filter(visible).map((b) => b.dataset.name),
    controlsText: t("controls"), controlResult: t("control-result"),
  };
})()`

func (p *page) read() (shown, error) {
	ctx, cancel := context.WithTimeout(p.ctx, waitTimeout)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[shown](readPage))
}

// waitFor reads the page until cond holds, and fails (with a screenshot
// and the last reading) when it does not within waitTimeout. The page
// redraws five times a second; reading every 50 ms sees each redraw.
func (p *page) waitFor(what string, cond func(shown) bool) shown {
	p.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		s, err := p.read()
		if err != nil {
			p.failed("reading the page, waiting for "+what, err)
		}
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.failed("waiting for "+what, fmt.Errorf("not within %v; the page showed: %+v", waitTimeout, s))
		}
		time.Sleep(50 * time.Millisecond) // a polling interval, not an assertion
	}
}

func (p *page) click(what, selector string) {
	p.t.Helper()
	p.do("click "+what, chromedp.Click(chromedp.CSS(selector), chromedp.NodeVisible))
}

func (p *page) press(control string) {
	p.t.Helper()
	p.click(control, fmt.Sprintf(`#controls button[data-name=%q]`, control))
}

// event is the first row of the event list for key and type.
func (s shown) event(typ, key string) []string {
	for _, e := range s.Events {
		if len(e) == 5 && e[0] == typ && e[1] == key {
			return e
		}
	}
	return nil
}

// settled: nothing queued or buffered, and every listener has handled every
// change HandleDeltas distributed (want of them).
func (s shown) settled(listeners, changes int) bool {
	if len(s.Listeners) != listeners || s.QueueDepth != 0 || s.HandleDeltas != changes {
		return false
	}
	for _, l := range s.Listeners {
		if l.calls() != changes || l.Pending != 0 || l.AddCh != 0 {
			return false
		}
	}
	return true
}

// demoHeld is the Indexer box's estimate of its pods' bytes.
var demoHeld = regexp.MustCompile(`^≈ [1-9][0-9.]* (B|KiB) held$`)

// pipelineStages are the boxes the page draws for every informer, in order.
var pipelineStages = []string{"st-reflector", "st-queue", "st-handledeltas", "st-indexer", "st-distribute"}

// everyStageDrawn checks the pipeline and each listener's
// addCh → pending → nextCh → handler on screen.
func everyStageDrawn(t *testing.T, s shown, listeners []string) {
	t.Helper()
	assert.Equal(t, pipelineStages, s.Stages, "the pipeline's boxes, visible and in order")
	assert.Equal(t, 4, s.Arrows, "an arrow between each stage")
	require.Len(t, s.Listeners, len(listeners))
	for i, l := range s.Listeners {
		assert.Equal(t, listeners[i], l.Name)
		assert.Equal(t, []string{"addCh", "pending", "nextCh", "handler"}, l.Stages, l.Name)
		assert.NotEqual(t, -1, l.calls(), "%s's handler box: %q", l.Name, l.Handler)
	}
}

// waterfall is the open waterfall as drawn: for each handler span, the span
// names from the root down to it; each span's direct children; the links.
type waterfall struct {
	Title    string              `json:"title"`
	Chains   [][]string          `json:"chains"`
	Children map[string][]string `json:"children"` // by span name (first of that name)
	AddChs   []string            `json:"addChs"`   // the addCh rows' text
	Links    []string            `json:"links"`
}

const readWaterfall = `(() => {
  const box = document.getElementById("waterfall");
  if (document.getElementById("waterfall-box").hidden) return null;
  const all = [...box.querySelectorAll("details")];
  const up = (d) => { const c = []; for (let e = d; e; e = e.parentElement.closest("details")) c.unshift(e.dataset.span); return c; };
  const children = {};
  for (const d of all) {
    if (!(d.dataset.span in children)) children[d.dataset.span] = [...d.children].filter((c) => c.tagName === "DETAILS").map((c) => c.dataset.span);
  }
  return {
    title: document.getElementById("waterfall-title").textContent,
    chains: all.filter((d) => /^On(Add|Update|Delete)$/.test(d.dataset.span)).map(up),
    children,
    addChs: all.filter((d) => d.dataset.span === "addCh").map((d) => d.querySelector(":scope > summary").textContent),
    links: [...box.querySelectorAll(".link")].map((l) => l.textContent),
  };
})()`

// waitWaterfall waits until the open waterfall satisfies cond.
func (p *page) waitWaterfall(what string, cond func(*waterfall) bool) *waterfall {
	p.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		ctx, cancel := context.WithTimeout(p.ctx, waitTimeout)
		w, err := chromedp.Run(ctx, chromedp.Evaluate[*waterfall](readWaterfall))
		cancel()
		if err != nil {
			p.failed("reading the waterfall, waiting for "+what, err)
		}
		if w != nil && cond(w) {
			return w
		}
		if time.Now().After(deadline) {
			p.failed("waiting for "+what, fmt.Errorf("not within %v; the waterfall showed: %+v", waitTimeout, w))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The live view on the embedded API server, in Chromium: every stage
// drawn, the reflector box showing the first request, a stream, with its
// objects and its bookmark; "create a pod" puts the event in the list and
// moves every counter; a click opens the contract's chain for each
// listener; "drop the watch" shows a rewatch without a new stream or LIST,
// "compact + force a 410 relist" a new stream (no LIST) after a 410, whose
// objects link to the RealFIFO.ReplacedAll; a slow handler's pending grows
// while the others stay empty; "server cannot stream" shows the refused
// stream, then LIST, then WATCH.
func TestLiveViewEmbeddedInChromium(t *testing.T) {
	d := startDemo(t)
	p := openPage(t, d, "embedded")
	p.do("the pipeline's boxes", chromedp.WaitVisible(chromedp.CSS("#st-reflector")), chromedp.WaitVisible(chromedp.CSS("#st-distribute")))

	listeners := []string{"demo.auditHandler#0", "demo.metricsHandler#1", "*demo.tunableHandler#2"}
	s := p.waitFor("the informer synced and watching, its controls shown", func(s shown) bool {
		return s.Phase == "WATCH" && s.Indexer == 1 && s.settled(3, 1) && slices.Contains(s.Controls, "create-pod")
	})
	everyStageDrawn(t, s, listeners)
	assert.Equal(t, "RealFIFO", s.QueueKind)
	assert.Contains(t, s.Source, "embedded API server at http://127.0.0.1:")
	assert.True(t, s.Probed, "the reflector box counts STREAMs, LISTs and WATCHes")
	assert.NotEmpty(t, s.RV)
	// Today's first request: a stream, which goes on as the watch after
	// its bookmark; no LIST, no plain WATCH.
	assert.Equal(t, []int{1, 0, 0}, []int{s.Streams, s.Lists, s.Watches}, "STREAM, LIST, WATCH counts")
	assert.Equal(t, []string{"STREAM from the latest · 1 object · bookmark rv " + s.RV}, s.Requests)
	assert.Equal(t, "initial state: 1 object streamed, bookmark at rv "+s.RV, s.Stream)
	// What the informer holds, as dropin's page says it (one code,
	// liveprobe.Holdings): the bytes of its one pod, its first relist.
	s = p.waitFor("the bytes held and the first relist", func(s shown) bool {
		return demoHeld.MatchString(s.Held) && strings.HasPrefix(s.Relist, "last relist: start, at ")
	})
	assert.Regexp(t, `, took \d+(\.\d)? m?s, 1 object($|, heap peak)`, s.Relist)
	assert.NotContains(t, s.Held, "before the transform", "the demo's informer has no transform")
	assert.Equal(t, []string{"create-pod", "update-pod", "delete-pod", "burst", "slow", "fast", "add-handler", "remove-handler", "drop-watch", "relist", "no-stream", "restart", "controller", "handoff", "lessons"}, s.Controls)
	p.screenshot("1-started", true)

	// create a pod: its ADDED in the list, handled by all three; the
	// indexer, HandleDeltas and each handler's calls move by one.
	p.press("create-pod")
	s = p.waitFor("demo/live-1's ADDED in the event list, handled by all three listeners", func(s shown) bool {
		e := s.event("ADDED", "demo/live-1")
		return e != nil && e[3] == "3" && s.Indexer == 2 && s.settled(3, 2)
	})
	assert.Contains(t, s.ControlResult, "create a pod: created demo/live-1 (ADDED). Look for: one trace per change")
	ev := s.event("ADDED", "demo/live-1")
	assert.Equal(t, s.RV, ev[2], "the reflector's resourceVersion is the event's")
	assert.NotEqual(t, "…", ev[4], "the total time is shown once every handler has run")

	// Its waterfall: per listener the contract's chain, root to handler.
	p.click("demo/live-1's row", `#events tbody tr[data-key="demo/live-1"][data-type="ADDED"]`)
	p.do("the waterfall", chromedp.WaitVisible(chromedp.CSS("#waterfall-box")))
	w := p.waitWaterfall("demo/live-1's three chains", func(w *waterfall) bool { return len(w.Chains) == 3 })
	assert.Equal(t, "ADDED demo/live-1 rv "+ev[2], w.Title)
	root := tracing.SpanRootPrefix + "watch"
	for _, c := range w.Chains {
		assert.Equal(t, []string{root, tracing.SpanHandleDeltas, tracing.SpanDistribute, tracing.SpanAddCh, tracing.SpanPop, tracing.SpanNextCh, "OnAdd"}, c)
	}
	assert.ElementsMatch(t, []string{tracing.SpanRealFIFOQueued, tracing.SpanHandleDeltas}, w.Children[root])
	assert.ElementsMatch(t, []string{"Indexer.Add", tracing.SpanDistribute}, w.Children[tracing.SpanHandleDeltas])
	var named []string
	for _, a := range w.AddChs {
		if m := regexp.MustCompile(`listener=(\S+)`).FindStringSubmatch(a); m != nil {
			named = append(named, m[1])
		}
	}
	assert.ElementsMatch(t, listeners, named, "each addCh names its listener")
	// The root links to its reflector cycle (Reflector.ListAndWatch, which
	// is still running, so the page says it is not kept yet).
	assert.NotEmpty(t, w.Links, "the root's link to its cycle span is drawn")
	p.screenshot("2-waterfall", true)

	// drop the watch: the watch had an event, so the reflector WATCHes
	// again from its resourceVersion, without a new stream or LIST.
	r0 := s
	p.press("drop-watch")
	s = p.waitFor("a new WATCH in the reflector box", func(s shown) bool { return s.Watches > r0.Watches && s.Phase == "WATCH" })
	assert.Equal(t, r0.Lists, s.Lists, "a dropped watch resumes without a LIST")
	assert.Equal(t, r0.Streams, s.Streams, "a dropped watch resumes without a new stream")
	// The box's request list says from where: the new WATCH follows the
	// dropped one (the stream, past its bookmark) and asks for the
	// resourceVersion of the last event it delivered, the one the
	// reflector box showed before the drop.
	require.GreaterOrEqual(t, len(s.Requests), 2, "%q", s.Requests)
	assert.True(t, strings.HasPrefix(s.Requests[len(s.Requests)-2], "STREAM from the latest · 1 object · bookmark rv "), "the dropped stream: %q", s.Requests)
	assert.Equal(t, "WATCH from "+r0.RV, s.Requests[len(s.Requests)-1], "the WATCH after the drop: %q", s.Requests)
	assert.Contains(t, s.ControlResult, "drop the watch: every watch of the API server ended. Look for:")
	p.screenshot("3-rewatch", true)

	// compact + 410: first an event on the new watch (so its end is not a
	// "very short watch"), then the relist, seen in the reflector box as a
	// new stream (no LIST) and as LISTED events (the initial state's event
	// type, streamed or listed) linked to the entry's RealFIFO.ReplacedAll.
	p.press("create-pod")
	r1 := p.waitFor("demo/live-2 cached", func(s shown) bool { return s.Indexer == 3 && s.settled(3, 3) })
	p.press("relist")
	s = p.waitFor("a 410, a new stream past its bookmark, and demo/live-1 LISTED", func(s shown) bool {
		return s.Streams > r1.Streams && s.WatchErrors > r1.WatchErrors && s.Phase == "WATCH" && s.event("LISTED", "demo/live-1") != nil
	})
	assert.Contains(t, s.ControlResult, "410")
	assert.Equal(t, r1.Lists, s.Lists, "a 410 is answered with a stream, not a LIST")
	// In the request list: a WATCH ended by ERROR Expired, then a stream
	// from that resourceVersion with every object and its bookmark.
	expired := slices.IndexFunc(s.Requests, func(r string) bool { return strings.HasSuffix(r, " · ERROR Expired") })
	require.GreaterOrEqual(t, expired, 0, "a WATCH that ended with 410 Expired in %q", s.Requests)
	require.Greater(t, len(s.Requests), expired+1, "%q", s.Requests)
	assert.Equal(t, "WATCH from "+r1.RV+" · ERROR Expired", s.Requests[expired])
	assert.Equal(t, "STREAM from "+r1.RV+" · 3 objects · bookmark rv "+s.RV, s.Requests[expired+1], "a stream after the 410: %q", s.Requests)
	assert.Equal(t, "initial state: 3 objects streamed, bookmark at rv "+s.RV, s.Stream)
	assert.Equal(t, 3, s.Indexer)
	s = p.waitFor("the relist after the 410 in the Reflector box", func(s shown) bool {
		return strings.HasPrefix(s.Relist, "last relist: 410 Expired, at ") && strings.Contains(s.Relist, ", 3 objects")
	})
	assert.Regexp(t, `took \d+(\.\d)? m?s, 3 objects`, s.Relist)
	assert.Regexp(t, demoHeld, s.Held)
	p.click("demo/live-1's LISTED row", `#events tbody tr[data-key="demo/live-1"][data-type="LISTED"]`)
	// demo/live-1 is unchanged since the watch saw it: HandleDeltas
	// (ReplacedAll) updates the cache, and distribute calls no handler,
	// since a same-resourceVersion update goes only to handlers due for a
	// resync, as in client-go; the page draws exactly that.
	listRoot := tracing.SpanRootPrefix + "watchlist"
	w = p.waitWaterfall("the LISTED waterfall", func(w *waterfall) bool {
		return strings.HasPrefix(w.Title, "LISTED demo/live-1") && slices.Contains(w.Children[tracing.SpanHandleDeltas], tracing.SpanDistribute)
	})
	assert.ElementsMatch(t, []string{tracing.SpanRealFIFOQueued, tracing.SpanHandleDeltas}, w.Children[listRoot])
	assert.ElementsMatch(t, []string{"Indexer.Update", tracing.SpanDistribute}, w.Children[tracing.SpanHandleDeltas])
	assert.Empty(t, w.Chains, "no handler is due for an unchanged object")
	assert.Equal(t, "0", s.event("LISTED", "demo/live-1")[3], "the list's handler column says so too")
	assert.True(t, slices.ContainsFunc(w.Links, func(l string) bool { return strings.Contains(l, tracing.SpanRealFIFOReplacedAll) }),
		"a streamed object links to its relist's entry, by name: %q", w.Links)
	p.screenshot("4-relist", true)
	// The relist's changes reached the cache but no handler: the counters
	// from here on.
	r2 := p.waitFor("the relist handled", func(s shown) bool { return s.QueueDepth == 0 && s.HandleDeltas == r1.HandleDeltas+3 })

	// A slow handler: its pending (the ring buffer) holds the burst, drawn
	// orange, while the fast listeners are already empty; the docs' picture
	// is taken then. At 10 ms per call, 500 updates keep it busy for 5 s.
	const burst = 500
	p.press("slow")
	p.waitFor("the slow control's answer", func(s shown) bool { return strings.Contains(s.ControlResult, "now takes 10ms per call") })
	p.do("the burst's size", chromedp.SetValue(chromedp.CSS(`#controls input`), strconv.Itoa(burst)))
	p.press("burst")
	s = p.waitFor("the slow handler's pending holding the burst while the others are empty", func(s shown) bool {
		if len(s.Listeners) != 3 || s.HandleDeltas != r2.HandleDeltas+burst {
			return false
		}
		fast, slow := s.Listeners[:2], s.Listeners[2]
		for _, l := range fast {
			if l.Pending != 0 || l.AddCh != 0 || l.PendingHot {
				return false
			}
		}
		return slow.Pending >= 50 && slow.PendingHot
	})
	p.do("scroll to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	shot := p.screenshot("5-slow-handler", false)
	if *updateScreenshot && shot != "" {
		updateDocsPicture(t, shot)
	}
	p.waitFor("the burst's answer", func(s shown) bool {
		return strings.Contains(s.ControlResult, fmt.Sprintf("%d updates of demo/web-1 written", burst))
	})
	p.press("fast")
	p.waitFor("the fast control's answer, and every update handled by every listener", func(s shown) bool {
		if !strings.Contains(s.ControlResult, "returns at once") || s.HandleDeltas != r2.HandleDeltas+burst || s.QueueDepth != 0 || len(s.Listeners) != 3 {
			return false
		}
		for i, l := range s.Listeners {
			if l.calls() != r2.Listeners[i].calls()+burst || l.Pending != 0 || l.AddCh != 0 {
				return false
			}
		}
		return true
	})

	// server cannot stream: an event on the watch first (so its end is not
	// a very short watch), then the server refuses streams and a relist is
	// forced: the rewatch's 410, the refused stream (422 Invalid), the LIST
	// it falls back to, then a WATCH from the list's resourceVersion.
	p.press("create-pod")
	r3 := p.waitFor("a fourth pod cached", func(s shown) bool {
		return s.Indexer == 4 && strings.Contains(s.ControlResult, "create a pod: created demo/live-")
	})
	p.press("no-stream")
	s = p.waitFor("the refused stream, then LIST, then WATCH", func(s shown) bool {
		return s.Lists > r3.Lists && s.Phase == "WATCH" && len(s.Requests) >= 4 && strings.HasPrefix(s.Requests[len(s.Requests)-1], "WATCH from ")
	})
	assert.Contains(t, s.ControlResult, "refuses streams (422 Invalid)")
	assert.Contains(t, s.Source, "the server cannot stream")
	n := len(s.Requests)
	assert.Equal(t, []string{"WATCH from " + r3.RV + " · ERROR Expired", "STREAM from " + r3.RV + " · 422 Invalid", "LIST from " + r3.RV + " · 4 objects"}, s.Requests[n-4:n-1])
	assert.Equal(t, r3.Streams+1, s.Streams, "the refused stream is counted")
	assert.Equal(t, "initial state: 4 objects listed (no stream)", s.Stream)
	p.screenshot("6-cannot-stream", true)
	p.press("no-stream")
	s = p.waitFor("the server streaming again", func(s shown) bool { return strings.Contains(s.Source, "the server streams") })
	assert.Contains(t, s.ControlResult, "the server streams again")

	// run a controller: a row for its handler that goes on past the
	// handler, with the workqueue and the reconciles the burst made.
	p.press("controller")
	s = p.waitFor("the controller's row with its workqueue", func(s shown) bool {
		for _, l := range s.Listeners {
			if strings.HasPrefix(l.Name, "*lessons.controllerHandler#") && strings.HasPrefix(l.Reconcile, "2 reconciles") {
				return true
			}
		}
		return false
	})
	for _, l := range s.Listeners {
		if !strings.HasPrefix(l.Name, "*lessons.controllerHandler#") {
			assert.Empty(t, l.Workqueue, "%s has no workqueue", l.Name)
			continue
		}
		assert.Equal(t, []string{"addCh", "pending", "nextCh", "handler", "workqueue", "reconcile"}, l.Stages)
		assert.Equal(t, "0 waiting · 6 adds · 4 merged", l.Workqueue)
		assert.Regexp(t, `^2 reconciles · last 2\d\d(\.\d+)? ms$`, l.Reconcile)
	}
	assert.Contains(t, s.ControlResult, "made 6 adds and 2 reconciles")
	p.screenshot("7-controller", true)

	assert.Empty(t, p.consoleErrors(), "the page reported no error")
	assert.Equal(t, 0, stopDemo(t, d), "trace-demo exits 0 on Ctrl-C")
}

// The live view on the real cluster (--cluster), in Chromium: the same
// pipeline drawn, the counters from the cluster's objects, a new object
// seen in the event list, and no controls (the demo does not write to
// your cluster).
func TestLiveViewOnTheRealClusterInChromium(t *testing.T) {
	kubeconfig, client, ns := clusterNamespace(t, "browser")
	for i := range 3 {
		createConfigMap(t, client, ns, fmt.Sprint("cm-", i))
	}

	d := startDemo(t, "--cluster", "--kubeconfig", kubeconfig, "--resource", "configmaps", "--namespace", ns)
	p := openPage(t, d, "cluster")
	p.do("the pipeline's boxes", chromedp.WaitVisible(chromedp.CSS("#st-reflector")), chromedp.WaitVisible(chromedp.CSS("#st-distribute")))
	s := p.waitFor("the cluster's three configmaps cached and handled", func(s shown) bool {
		return s.Indexer == 3 && s.settled(3, 3)
	})
	everyStageDrawn(t, s, []string{"demo.auditHandler#0", "demo.metricsHandler#1", "*demo.slowHandler#2"})
	assert.Equal(t, "RealFIFO", s.QueueKind)
	assert.Contains(t, s.Source, "cluster ")
	assert.NotEmpty(t, s.RV, "the last synced resourceVersion")
	// The demo builds the cluster's informer with a probe on its
	// ListerWatcher: the reflector box counts its requests there too.
	assert.True(t, s.Probed, "the reflector box counts STREAMs, LISTs and WATCHes")
	assert.Equal(t, "WATCH", s.Phase)
	// The real kube-apiserver streams: the informer's first request is a
	// stream, and no LIST follows.
	assert.Equal(t, 1, s.Streams, "one stream: %q", s.Requests)
	assert.Zero(t, s.Lists, "no LIST: %q", s.Requests)
	require.NotEmpty(t, s.Requests)
	assert.Regexp(t, `^STREAM from the latest · 3 objects · bookmark rv \d+$`, s.Requests[0])
	assert.Zero(t, s.WatchErrors)
	assert.Empty(t, s.Controls, "no buttons on a real cluster")
	assert.Contains(t, s.ControlsText, "no controls on a real cluster")

	createConfigMap(t, client, ns, "cm-3")
	s = p.waitFor(ns+"/cm-3's ADDED in the list, handled by all three", func(s shown) bool {
		e := s.event("ADDED", ns+"/cm-3")
		return e != nil && e[3] == "3" && s.Indexer == 4 && s.settled(3, 4)
	})
	p.screenshot("1-watching", true)
	assert.Empty(t, p.consoleErrors(), "the page reported no error")
	assert.Equal(t, 0, stopDemo(t, d), "trace-demo exits 0 on Ctrl-C")
}

// updateDocsPicture writes the screenshot at shot to docs/img/liveview.png
// with a palette of its 256 most frequent colours (the page is flat
// colours and anti-aliased text: the same picture to the eye, a third of
// the bytes).
func updateDocsPicture(t *testing.T, shot string) {
	t.Helper()
	b, err := os.ReadFile(shot)
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(b))
	require.NoError(t, err)
	r := img.Bounds()
	count := map[color.RGBA]int{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			count[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	colours := slices.Collect(maps.Keys(count))
	slices.SortFunc(colours, func(a, b color.RGBA) int {
		if c := cmp.Compare(count[b], count[a]); c != 0 {
			return c
		}
		return cmp.Compare(uint32(a.R)<<24|uint32(a.G)<<16|uint32(a.B)<<8|uint32(a.A), uint32(b.R)<<24|uint32(b.G)<<16|uint32(b.B)<<8|uint32(b.A))
	})
	palette := color.Palette{}
	for _, c := range colours[:min(256, len(colours))] {
		palette = append(palette, c)
	}
	out := image.NewPaletted(r, palette)
	draw.Draw(out, r, img, r.Min, draw.Src) // nearest colour, no dithering
	var buf bytes.Buffer
	require.NoError(t, (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, out))
	dst := filepath.Join(repoRoot(), "docs", "img", "liveview.png")
	require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	require.NoError(t, os.WriteFile(dst, buf.Bytes(), 0o644))
	t.Logf("docs picture: %s (%d bytes)", dst, buf.Len())
}

// clusterNamespace makes a namespace named prefix-NNNNNN on the cluster
// that KUBECONFIG names (hack/local-cluster.sh's), deleted when the test
// ends; it returns the kubeconfig's path, a core/v1 REST client on the
// cluster and the namespace's name.
func clusterNamespace(t *testing.T, prefix string) (kubeconfig string, client *rest.RESTClient, ns string) {
	t.Helper()
	kubeconfig = os.Getenv("KUBECONFIG")
	require.NotEmpty(t, kubeconfig, `KUBECONFIG is not set: run with hack/test.sh, or after hack/local-cluster.sh up && eval "$(hack/local-cluster.sh env)"`)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	require.NoError(t, err)
	client, err = kube.RESTClientFor(cfg, corev1.SchemeGroupVersion)
	require.NoError(t, err)
	ns = fmt.Sprintf("%s-%06d", prefix, time.Now().UnixMicro()%1_000_000)
	require.NoError(t, client.Post().Resource("namespaces").Body(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}).Do(context.Background()).Error())
	t.Cleanup(func() { _ = client.Delete().Resource("namespaces").Name(ns).Do(context.Background()).Error() })
	return kubeconfig, client, ns
}

func createConfigMap(t *testing.T, client *rest.RESTClient, ns, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": "0"}}
	require.NoError(t, client.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(context.Background()).Error())
}
