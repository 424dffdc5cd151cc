//go:build browser

package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	goruntime "runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/demo/liveview"
	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
	"github.com/informer-anatomy/informer-anatomy/liveprobe"
)

// scaleObjectsEnv sets how many ConfigMaps TestLiveViewAtScaleInChromium's
// big informer holds: 150,000 unless set (hack/test.sh runs that size).
const scaleObjectsEnv = "INFORMER_ANATOMY_BROWSER_OBJECTS"

func scaleObjects(t *testing.T) int {
	v := os.Getenv(scaleObjectsEnv)
	if v == "" {
		return 150_000
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "%s=%q: a number of objects", scaleObjectsEnv, v)
	require.GreaterOrEqual(t, n, 1000, "%s: at least 1,000 objects, or the burst is no burst", scaleObjectsEnv)
	return n
}

// scaleLW lists a fixed set of ConfigMaps (as a server that cannot stream:
// the reflector LISTs) and hands each watch the events send writes.
type scaleLW struct {
	list *corev1.ConfigMapList
	mu   sync.Mutex
	w    *scaleWatch // the open watch; guarded by mu
}

func newScaleLW(ns string, n int) *scaleLW {
	l := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: make([]corev1.ConfigMap, n)}
	for i := range l.Items {
		l.Items[i] = corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprint("cm-", i), ResourceVersion: "1",
			UID: types.UID("uid-" + ns + "-" + strconv.Itoa(i))}, Data: map[string]string{"v": "0"}}
	}
	return &scaleLW{list: l}
}

func (l *scaleLW) List(metav1.ListOptions) (runtime.Object, error) { return l.list, nil }

func (l *scaleLW) Watch(metav1.ListOptions) (watch.Interface, error) {
	w := &scaleWatch{ch: make(chan watch.Event, 1024), done: make(chan struct{})}
	l.mu.Lock()
	l.w = w
	l.mu.Unlock()
	return w, nil
}

// IsWatchListSemanticsUnSupported: the reflector LISTs, as from a server
// that cannot stream.
func (l *scaleLW) IsWatchListSemanticsUnSupported() bool { return true }

// send writes ev to the open watch; false if there is none, it was
// stopped, or ctx ended.
func (l *scaleLW) send(ctx context.Context, ev watch.Event) bool {
	l.mu.Lock()
	w := l.w
	l.mu.Unlock()
	if w == nil {
		return false
	}
	select {
	case w.ch <- ev:
		return true
	case <-w.done:
		return false
	case <-ctx.Done():
		return false
	}
}

type scaleWatch struct {
	ch   chan watch.Event
	done chan struct{}
	once sync.Once
}

func (w *scaleWatch) Stop()                          { w.once.Do(func() { close(w.done) }) }
func (w *scaleWatch) ResultChan() <-chan watch.Event { return w.ch }

// The handlers, named scale-big and scale-small: their names find the two
// informers' boxes on the page.
// startBurst sends updates of lw's n objects, each a new resourceVersion, as
// fast as the informer takes them, until ctx ends, on a goroutine of wg.
// At most 1,000 wait for the handler, whose calls are counted in calls: a
// watch that outruns the informer grows its queue without end (the
// reflector never waits), which would measure the test's source, not the
// page. It returns the count of updates sent.
func startBurst(ctx context.Context, wg *sync.WaitGroup, lw *scaleLW, n int, calls *atomic.Int64) *atomic.Int64 {
	var sent atomic.Int64
	settled := calls.Load()
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			for sent.Load()-(calls.Load()-settled) > 1000 && ctx.Err() == nil {
				time.Sleep(time.Millisecond)
			}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "big", Name: fmt.Sprint("cm-", i%n),
				UID: types.UID("uid-big-" + strconv.Itoa(i%n)), ResourceVersion: strconv.Itoa(i + 2)}, Data: map[string]string{"v": strconv.Itoa(i)}}
			if lw.send(ctx, watch.Event{Type: watch.Modified, Object: cm}) {
				sent.Add(1)
			} else {
				time.Sleep(time.Millisecond) // between two watches
			}
		}
	})
	return &sent
}

type scaleBigHandler struct{ calls *atomic.Int64 }

func (h scaleBigHandler) OnAdd(any, bool)   { h.calls.Add(1) }
func (h scaleBigHandler) OnUpdate(any, any) { h.calls.Add(1) }
func (h scaleBigHandler) OnDelete(any)      { h.calls.Add(1) }

type scaleSmallHandler struct{}

func (scaleSmallHandler) OnAdd(any, bool)   {}
func (scaleSmallHandler) OnUpdate(any, any) {}
func (scaleSmallHandler) OnDelete(any)      {}

// scaleBox is one informer's box as the page draws it.
type scaleBox struct {
	Line string `json:"line"` // "synced · rv … · N changes applied · M objects cached"
	Held string `json:"held"` // "≈ … held · last relist: …"
	// Nodes are the DOM elements in the box, less its list of the
	// reflector's last requests (up to five: their number follows the
	// reflector's history, not the objects).
	Nodes  int  `json:"nodes"`
	Absent bool `json:"absent"` // no box for this handler
}

// scalePage is what the page shows, read from the DOM, with its size.
type scalePage struct {
	Big, Small scaleBox
	Nodes      int     `json:"nodes"` // DOM elements in the document
	Events     int     `json:"events"`
	Heap       float64 `json:"heap"` // the JS heap in use after a GC, bytes
}

const readScalePage = `(() => {
  const box = (prefix) => {
    const d = [...document.querySelectorAll("#process-informers .informer")].find((d) => d.querySelector('tr[data-listener^="' + prefix + '"]'));
    if (!d) return { absent: true };
    return { line: d.children[1].textContent, held: d.querySelector(".held").textContent, nodes: d.getElementsByTagName("*").length - d.querySelectorAll(".requests li").length };
  };
  gc();
  return {
    big: box("scale-big#"), small: box("scale-small#"),
    nodes: document.getElementsByTagName("*").length,
    events: document.querySelectorAll("#events tbody tr").length,
    heap: performance.memory.usedJSHeapSize,
  };
})()`

var (
	scaleLineRe   = regexp.MustCompile(`· (\d+) changes applied · (\d+) objects cached$`)
	scaleHeldRe   = regexp.MustCompile(`^≈ [0-9.]+ (KiB|MiB|GiB) held · last relist: `)
	scaleRelistRe = regexp.MustCompile(`last relist: (start|410 Expired), at [^,]+, took ([0-9.]+ m?s), (\d+) objects(, heap peak ([0-9.]+ [KMG]iB))?$`)
)

// changes and cached are the numbers of a box's line (-1: not drawn so).
func (b scaleBox) changes() int { return scaleNumber(b.Line, 1) }
func (b scaleBox) cached() int  { return scaleNumber(b.Line, 2) }

func scaleNumber(line string, i int) int {
	m := scaleLineRe.FindStringSubmatch(line)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[i])
	return n
}

// The live view of a process whose informer holds 150,000 ConfigMaps
// (INFORMER_ANATOMY_BROWSER_OBJECTS for another size), with a burst of
// updates running, every change traced into the page's span store, in
// Chromium: the page draws the informer's line (objects cached, the
// bytes they hold, the last relist with its objects, time and heap peak)
// and keeps updating it through the burst and through a relist of every
// object forced by a 410; api/state answers (its time is logged, not
// asserted: see docs/scale.md for a run's numbers) with a body that does
// not hold the objects; the span store keeps at most its 2,000 traces
// and evicts the rest; the page's memory stays bounded: the big
// informer's box has as many DOM elements as the box of an informer of
// 100 objects, the document's elements do not grow with the burst, and
// the JS heap after a GC stays within half again of what it was once the
// page first showed the synced informer.
func TestLiveViewAtScaleInChromium(t *testing.T) {
	n := scaleObjects(t)
	h := dropin.LiveViewHandler()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(dropin.LiveViewSpanProcessor()))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })

	run := func(lw *scaleLW, handler cache.ResourceEventHandler) *dropin.Informer {
		inf := dropin.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{}).(*dropin.Informer)
		require.NoError(t, inf.SetTracerProvider(tp))
		_, err := inf.AddEventHandler(handler)
		require.NoError(t, err)
		wg.Go(func() { inf.RunWithContext(ctx) })
		return inf
	}
	bigLW, smallLW := newScaleLW("big", n), newScaleLW("small", 100)
	var bigCalls atomic.Int64
	started := time.Now()
	big := run(bigLW, dropin.NamedHandler("scale-big", scaleBigHandler{&bigCalls}))
	small := run(smallLW, dropin.NamedHandler("scale-small", scaleSmallHandler{}))
	require.True(t, cache.WaitForCacheSync(ctx.Done(), big.HasSynced, small.HasSynced))
	t.Logf("%d ConfigMaps listed and cached in %v", n, time.Since(started).Round(time.Millisecond))
	liveHeap := func() float64 {
		var ms goruntime.MemStats
		goruntime.GC()
		goruntime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc)
	}
	synced := liveHeap()

	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	// gc() and a precise performance.memory, for the page's heap.
	b := openTab(t, chromedp.Flag("js-flags", "--expose-gc"), chromedp.Flag("enable-precise-memory-info", true))
	p := &page{tab: b, t: t, name: "scale"}
	removeScreenshots("scale")
	open, cancelOpen := context.WithTimeout(b.ctx, waitTimeout)
	defer cancelOpen()
	require.NoError(t, chromedp.Do(open, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(hs.URL+"/")), "open the page")
	read := func() scalePage {
		t.Helper()
		c, cancel := context.WithTimeout(b.ctx, waitTimeout)
		defer cancel()
		s, err := chromedp.Run(c, chromedp.Evaluate[scalePage](readScalePage))
		require.NoError(t, err)
		return s
	}
	waitPage := func(what string, cond func(scalePage) bool) scalePage {
		t.Helper()
		deadline := time.Now().Add(3 * waitTimeout)
		for {
			s := read()
			if cond(s) {
				return s
			}
			if time.Now().After(deadline) {
				p.screenshot("FAILED", true)
				t.Fatalf("waiting for %s: the page showed %+v", what, s)
			}
			time.Sleep(100 * time.Millisecond) // a polling interval, not an assertion
		}
	}
	first := waitPage("the big informer synced, its bytes and its first relist", func(s scalePage) bool {
		return s.Big.cached() == n && scaleHeldRe.MatchString(s.Big.Held) && scaleRelistRe.MatchString(s.Big.Held) && s.Small.cached() == 100
	})
	m := scaleRelistRe.FindStringSubmatch(first.Big.Held)
	assert.Equal(t, "start", m[1])
	assert.Equal(t, strconv.Itoa(n), m[3], "the first relist fetched every object")
	t.Logf("page at %d objects: %q; %q; %d DOM elements, JS heap %.1f MiB", n, first.Big.Line, first.Big.Held, first.Nodes, first.Heap/(1<<20))
	p.screenshot("1-synced", true)

	// The burst: updates of the big informer's objects until the test
	// ends.
	sent := startBurst(ctx, &wg, bigLW, n, &bigCalls)
	moving := waitPage("the burst drawn", func(s scalePage) bool { return s.Big.changes() > first.Big.changes()+1000 && s.Events > 0 })

	// api/state during the burst, as the page reads it.
	var st livepage.ProcessState
	gets := testutil.TimedGets(t, hs.URL+"/api/state", 50, &st)
	t.Logf("api/state during the burst at %d objects: %v", n, gets)
	assert.Less(t, gets.MaxBody, 512<<10, "api/state holds counters and the last events, not the objects")
	assert.LessOrEqual(t, st.TracesKept, 2000, "the span store keeps its last 2,000 traces")
	assert.Positive(t, st.TracesEvicted, "and evicts the older")

	// A 410 on the watch: the reflector LISTs every object again while
	// the burst goes on (on the next watch).
	require.True(t, bigLW.send(ctx, watch.Event{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone,
		Reason: metav1.StatusReasonExpired, Message: "too old resource version"}}))
	relisted := waitPage("the relist after the 410, with every object", func(s scalePage) bool {
		m := scaleRelistRe.FindStringSubmatch(s.Big.Held)
		return m != nil && m[1] == "410 Expired" && m[3] == strconv.Itoa(n) && s.Big.cached() == n
	})
	t.Logf("after the 410: %q", relisted.Big.Held)
	p.screenshot("2-relisted", true)

	// The page through the relist's changes (one per object: the cache's
	// Replace, each object traced while it is applied) and more of the
	// burst: its memory bounded.
	last := waitPage("the relist applied and the burst's next changes drawn", func(s scalePage) bool {
		return s.Big.changes() > relisted.Big.changes()+n+5000
	})
	burst := liveHeap()
	t.Logf("after %d updates sent: page %d DOM elements (big box %d, small box %d), JS heap %.1f MiB (%.1f at first); process's live heap %.0f MiB (%.0f once synced, before the page)",
		sent.Load(), last.Nodes, last.Big.Nodes, last.Small.Nodes, last.Heap/(1<<20), first.Heap/(1<<20), burst/(1<<20), synced/(1<<20))
	assert.Equal(t, last.Small.Nodes, last.Big.Nodes, "a box does not grow with its informer's objects")
	assert.LessOrEqual(t, last.Nodes, moving.Nodes+moving.Nodes/10, "the document does not grow with the burst")
	assert.LessOrEqual(t, last.Heap, 1.5*first.Heap, "the page's heap after a GC stays bounded")
	c, cancelState := context.WithTimeout(context.Background(), waitTimeout)
	defer cancelState()
	req, _ := http.NewRequestWithContext(c, http.MethodGet, hs.URL+"/api/state", nil)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, json.NewDecoder(res.Body).Decode(&st))
	res.Body.Close()
	assert.LessOrEqual(t, st.TracesKept, 2000)
	// The process's live heap: beside what it held once synced, the
	// objects the burst replaced in the cache (one per object at most),
	// the 2,000 traces the span store keeps and the 1,000 changes in
	// flight with their spans, none of which grows with the burst. (A
	// store that kept every trace fails the TracesKept checks above.)
	assert.LessOrEqual(t, burst, 1.5*synced+128<<20, "the process's live heap stays bounded through the burst")
	p.screenshot("3-burst", true)
	assert.Empty(t, b.consoleErrors(), "the page ran without errors")
}

// demoScalePage is what the demo's page shows of its informer, read from
// the DOM, with the page's size.
type demoScalePage struct {
	Indexer      string  `json:"indexer"`
	HandleDeltas string  `json:"handleDeltas"`
	Held         string  `json:"held"`   // the Indexer box's bytes
	Relist       string  `json:"relist"` // the Reflector box's last relist
	Nodes        int     `json:"nodes"`  // DOM elements, less the reflector's request list
	Events       int     `json:"events"`
	Heap         float64 `json:"heap"` // the JS heap in use after a GC, bytes
}

const readDemoScalePage = `(() => {
  const t = (id) => document.getElementById(id).textContent;
  gc();
  return {
    indexer: t("indexer"), handleDeltas: t("handledeltas"), held: t("indexer-held"), relist: t("reflector-relist"),
    nodes: document.getElementsByTagName("*").length - document.querySelectorAll("#reflector-requests li").length,
    events: document.querySelectorAll("#events tbody tr").length,
    heap: performance.memory.usedJSHeapSize,
  };
})()`

var demoScaleHeldRe = regexp.MustCompile(`^≈ [0-9.]+ (KiB|MiB|GiB) held$`)

// The demo's own page (demo/liveview's session, as trace-demo --ui serves
// it) on chapter 5's informer holding 150,000 ConfigMaps
// (INFORMER_ANATOMY_BROWSER_OBJECTS for another size), every change traced
// into the session's span store, a burst of updates running and a 410
// relist midway, in Chromium: the Indexer box shows every object and the
// bytes they hold, the Reflector box the last relist (start, then the
// 410, each with every object), HandleDeltas moves through the burst;
// api/state answers with counters (times logged, not asserted); the span
// store keeps at most its traces; the document's elements do not grow
// with the burst and the JS heap after a GC stays within half again of
// the first draw's.
func TestDemoPageAtScaleInChromium(t *testing.T) {
	n := scaleObjects(t)
	lw := newScaleLW("big", n)
	probe := liveprobe.NewReflectorProbe(lw)
	var held liveprobe.CacheBytes
	tp := sdktrace.NewTracerProvider()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	const traces = 2000
	s := liveview.ServeSession(ln, "http://"+ln.Addr().String()+"/", liveview.SessionOptions{TracerProvider: tp, Traces: traces,
		Warn: t.Logf, Stdout: io.Discard})
	t.Cleanup(s.Stop)
	inf := processor.NewSharedIndexInformerWithOptions(probe, &corev1.ConfigMap{}, processor.SharedIndexInformerOptions{
		TracerProvider: tp, Name: "configmaps", Observer: processor.Observer{Stored: held.Stored}})
	held.Start(inf)
	var calls atomic.Int64
	_, err = inf.AddEventHandler(scaleBigHandler{&calls})
	require.NoError(t, err)
	s.Attach(inf, probe, &held, "configmaps", fmt.Sprintf("an in-process source of %d ConfigMaps", n), nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	started := time.Now()
	wg.Go(func() { inf.RunWithContext(ctx) })
	require.True(t, cache.WaitForCacheSync(ctx.Done(), inf.HasSynced))
	t.Logf("%d ConfigMaps listed and cached in %v", n, time.Since(started).Round(time.Millisecond))

	b := openTab(t, chromedp.Flag("js-flags", "--expose-gc"), chromedp.Flag("enable-precise-memory-info", true))
	open, cancelOpen := context.WithTimeout(b.ctx, waitTimeout)
	defer cancelOpen()
	require.NoError(t, chromedp.Do(open, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(s.URL())), "open the page")
	p := &page{tab: b, t: t, name: "demo-scale"}
	removeScreenshots("demo-scale")
	waitPage := func(what string, cond func(demoScalePage) bool) demoScalePage {
		t.Helper()
		deadline := time.Now().Add(3 * waitTimeout)
		for {
			c, cancel := context.WithTimeout(b.ctx, waitTimeout)
			s, err := chromedp.Run(c, chromedp.Evaluate[demoScalePage](readDemoScalePage))
			cancel()
			require.NoError(t, err)
			if cond(s) {
				return s
			}
			if time.Now().After(deadline) {
				p.screenshot("FAILED", true)
				t.Fatalf("waiting for %s: the page showed %+v", what, s)
			}
			time.Sleep(100 * time.Millisecond) // a polling interval, not an assertion
		}
	}
	number := func(s string) int { v, _ := strconv.Atoi(s); return v }
	relist := func(s demoScalePage) []string { return scaleRelistRe.FindStringSubmatch(s.Relist) }
	first := waitPage("every object, its bytes and the first relist", func(s demoScalePage) bool {
		m := relist(s)
		return number(s.Indexer) == n && demoScaleHeldRe.MatchString(s.Held) && m != nil && m[1] == "start" && m[3] == strconv.Itoa(n)
	})
	t.Logf("demo page at %d objects: %q; %q; %d DOM elements, JS heap %.1f MiB", n, first.Held, first.Relist, first.Nodes, first.Heap/(1<<20))
	p.screenshot("1-synced", true)

	sent := startBurst(ctx, &wg, lw, n, &calls)
	moving := waitPage("the burst drawn", func(s demoScalePage) bool {
		return number(s.HandleDeltas) > number(first.HandleDeltas)+1000 && s.Events > 0
	})

	var st liveview.State
	gets := testutil.TimedGets(t, s.URL()+"api/state", 50, &st)
	t.Logf("the demo's api/state during the burst at %d objects: %v", n, gets)
	assert.Less(t, gets.MaxBody, 512<<10, "api/state holds counters and the last events, not the objects")
	assert.LessOrEqual(t, st.TracesKept, traces, "the span store keeps its last traces")
	assert.Positive(t, st.TracesEvicted, "and evicts the older")

	require.True(t, lw.send(ctx, watch.Event{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone,
		Reason: metav1.StatusReasonExpired, Message: "too old resource version"}}))
	relisted := waitPage("the relist after the 410, with every object", func(s demoScalePage) bool {
		m := relist(s)
		return m != nil && m[1] == "410 Expired" && m[3] == strconv.Itoa(n) && number(s.Indexer) == n
	})
	t.Logf("after the 410: %q; %q", relisted.Held, relisted.Relist)
	p.screenshot("2-relisted", true)
	last := waitPage("the relist applied and the burst's next changes drawn", func(s demoScalePage) bool {
		return number(s.HandleDeltas) > number(relisted.HandleDeltas)+n+5000
	})
	t.Logf("after %d updates sent: the demo's page %d DOM elements, JS heap %.1f MiB (%.1f at first)", sent.Load(), last.Nodes, last.Heap/(1<<20), first.Heap/(1<<20))
	assert.LessOrEqual(t, last.Nodes, moving.Nodes+moving.Nodes/10, "the document does not grow with the burst")
	assert.LessOrEqual(t, last.Heap, 1.5*first.Heap, "the page's heap after a GC stays bounded")
	assert.Regexp(t, demoScaleHeldRe, last.Held)
	p.screenshot("3-burst", true)
	assert.Empty(t, b.consoleErrors(), "the page ran without errors")
}
