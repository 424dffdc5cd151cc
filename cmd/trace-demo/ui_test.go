package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informer-anatomy/informer-anatomy/demo/demoproc"
	"github.com/informer-anatomy/informer-anatomy/demo/lessons"
	"github.com/informer-anatomy/informer-anatomy/demo/liveview"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
	"github.com/informer-anatomy/informer-anatomy/liveprobe"
)

// liveDemo is a trace-demo --ui run on 127.0.0.1:0.
type liveDemo struct {
	url    string
	stop   func() runResult
	stdout *demoproc.LockedBuffer
	stderr *demoproc.LockedBuffer
}

func startLiveDemo(t *testing.T, args ...string) *liveDemo {
	t.Helper()
	return startLiveDemoWith(t, hooks{}, args...)
}

// startLiveDemoWith is startLiveDemo with hooks into the run.
func startLiveDemoWith(t *testing.T, h hooks, args ...string) *liveDemo {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb demoproc.LockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- runWith(ctx, append([]string{"--ui", "--ui-addr", "127.0.0.1:0"}, args...), &out, &errb, fastBackoff(h))
	}()
	urlRe := regexp.MustCompile(`live view: (http://\S+)`)
	var url string
	require.Eventually(t, func() bool {
		m := urlRe.FindStringSubmatch(out.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	}, 20*time.Second, 5*time.Millisecond, "the URL is printed; stderr: %s", &errb)
	var once sync.Once
	var res runResult
	d := &liveDemo{url: url, stdout: &out, stderr: &errb}
	d.stop = func() runResult {
		once.Do(func() {
			cancel()
			res = runResult{code: <-done, stdout: out.String(), stderr: errb.String()}
		})
		return res
	}
	t.Cleanup(func() { d.stop() })
	return d
}

func (d *liveDemo) state(t *testing.T) liveview.State {
	t.Helper()
	res, err := http.Get(d.url + "api/state")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var st liveview.State
	require.NoError(t, json.NewDecoder(res.Body).Decode(&st))
	return st
}

func (d *liveDemo) press(t *testing.T, control string) (int, liveview.ControlResult) {
	t.Helper()
	res, err := http.Post(d.url+"api/control/"+control, "", nil)
	require.NoError(t, err)
	defer res.Body.Close()
	var r liveview.ControlResult
	require.NoError(t, json.NewDecoder(res.Body).Decode(&r))
	return res.StatusCode, r
}

// waitState polls the data endpoint, as the page does, until cond holds;
// if it never does, the failure shows the pipeline as last read (which
// counter stopped where tells a lost notification from a slow machine).
func (d *liveDemo) waitState(t *testing.T, what string, cond func(liveview.State) bool) liveview.State {
	t.Helper()
	return d.waitStateFor(t, 30*time.Second, what, cond)
}

// waitStateFor is waitState with its own deadline.
func (d *liveDemo) waitStateFor(t *testing.T, within time.Duration, what string, cond func(liveview.State) bool) liveview.State {
	t.Helper()
	var st liveview.State
	if !assert.Eventually(t, func() bool { st = d.state(t); return cond(st) }, within, 10*time.Millisecond, what) {
		t.Fatalf("%s: not within %v; the pipeline as last read: %+v", what, within, st.Pipeline)
	}
	return st
}

func totalCalls(p liveview.Pipeline) (n uint64) {
	for _, l := range p.Listeners {
		n += l.Calls
	}
	return n
}

// settled: the queue and every listener are empty, and each listener has
// handled every change HandleDeltas distributed.
func settled(p liveview.Pipeline, listeners int) bool {
	if len(p.Listeners) != listeners || p.Queue.Depth != 0 {
		return false
	}
	for _, l := range p.Listeners {
		if l.Calls != p.HandleDeltas || l.Pending != 0 || l.AddCh != 0 {
			return false
		}
	}
	return true
}

// The page, its script and its style come from the binary; the data
// endpoint draws the whole pipeline; "create a pod" makes the event appear
// in the list with every counter moved by one, and its waterfall is the
// contract's chain for each of the three listeners.
func TestLiveViewCreatePodShowsEventCountersAndWaterfall(t *testing.T) {
	d := startLiveDemo(t)
	for _, p := range []string{"", "app.js", "app.css"} {
		res, err := http.Get(d.url + p)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode, p)
	}
	before := d.waitState(t, "the informer synced and watching", func(st liveview.State) bool {
		return st.Pipeline.Reflector.Phase == "WATCH" && st.Pipeline.HandleDeltas == 1 && settled(st.Pipeline, 3)
	})
	p := before.Pipeline
	assert.Equal(t, "realfifo", p.Queue.Kind)
	// Today's first request: one stream, no LIST, no plain WATCH (the
	// stream goes on as the watch after its bookmark).
	r0 := p.Reflector
	assert.Equal(t, []int{1, 0, 0}, []int{r0.Streams, r0.Lists, r0.Watches}, "streams, lists, watches: %+v", r0.Requests)
	assert.Equal(t, 1, r0.Streamed, "demo/web-1")
	require.Len(t, r0.Requests, 1)
	assert.Equal(t, "STREAM from the latest · 1 object · bookmark rv "+r0.Bookmark, r0.Requests[0].String())
	for i, name := range []string{"demo.auditHandler#0", "demo.metricsHandler#1", "*demo.tunableHandler#2"} {
		assert.Equal(t, name, p.Listeners[i].Name)
	}

	code, r := d.press(t, "create-pod")
	require.Equal(t, http.StatusOK, code, r.Message)
	assert.Equal(t, "created demo/live-1 (ADDED)", r.Message)
	assert.Contains(t, r.LookFor, "one trace per change")

	var ev liveview.Event
	after := d.waitState(t, "demo/live-1 in the event list, every handler called", func(st liveview.State) bool {
		for _, e := range st.Events {
			if e.Key == "demo/live-1" && e.HandlerCalls == 3 {
				ev = e
				return settled(st.Pipeline, 3)
			}
		}
		return false
	})
	assert.Equal(t, "ADDED", ev.Type)
	assert.Positive(t, ev.TotalMicros)
	assert.Equal(t, p.HandleDeltas+1, after.Pipeline.HandleDeltas)
	assert.Equal(t, 2, after.Pipeline.Indexer)
	assert.Equal(t, totalCalls(p)+3, totalCalls(after.Pipeline))
	assert.Equal(t, ev.ResourceVersion, after.Pipeline.Reflector.ResourceVersion)

	chains := waterfallChains(t, d.url, ev.TraceID)
	require.Len(t, chains, 3, "one chain per listener")
	for _, c := range chains {
		require.NoError(t, c.Check())
		assert.Equal(t, "ListAndWatch watch", c.Root().Name)
		assert.Equal(t, "demo/live-1", c.Key())
	}
	res := d.stop()
	assert.Equal(t, 0, res.code, res.stderr)
}

// waterfallChains reads the trace endpoint and rebuilds its spans for
// spancheck, the contract's own checker.
func waterfallChains(t *testing.T, url, traceID string) []spancheck.Chain {
	t.Helper()
	res, err := http.Get(url + "api/trace/" + traceID)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var wf liveview.Waterfall
	require.NoError(t, json.NewDecoder(res.Body).Decode(&wf))
	tid, err := trace.TraceIDFromHex(wf.TraceID)
	require.NoError(t, err)
	kinds := map[string]trace.SpanKind{}
	for k := trace.SpanKindUnspecified; k <= trace.SpanKindConsumer; k++ {
		kinds[k.String()] = k
	}
	t0 := time.Unix(0, 0)
	var spans []spancheck.Span
	for _, ws := range wf.Spans {
		s := spancheck.Span{Name: ws.Name, TraceID: tid, Kind: kinds[ws.Kind], Attrs: map[attribute.Key]string{},
			Start: t0.Add(time.Duration(ws.OffsetMicros) * time.Microsecond)}
		s.End = s.Start.Add(time.Duration(ws.Micros) * time.Microsecond)
		s.SpanID, err = trace.SpanIDFromHex(ws.SpanID)
		require.NoError(t, err)
		if ws.ParentID != "" {
			s.ParentID, err = trace.SpanIDFromHex(ws.ParentID)
			require.NoError(t, err)
		}
		for k, v := range ws.Attrs {
			s.Attrs[attribute.Key(k)] = v
		}
		// What the page draws as given: the wait mark and the row's
		// attributes (test/browser reads listener= off each addCh row).
		assert.Equal(t, tracing.IsWait(ws.Name), ws.Wait, "%s's wait mark", ws.Name)
		if ws.Name == tracing.SpanAddCh {
			assert.Contains(t, ws.AttrText, "listener="+ws.Attrs[string(tracing.KeyListener)], "the addCh row names its listener")
		}
		spans = append(spans, s)
	}
	return spancheck.NewIndex(spans).HandlerChains()
}

// lines is the reflector box's request list.
func lines(r liveprobe.ReflectorState) []string {
	var out []string
	for _, q := range r.Requests {
		out = append(out, q.String())
	}
	return out
}

// Dropping a watch that has delivered an event makes the reflector WATCH
// again without a new stream or LIST; compacting first makes the rewatch
// fail with 410, and the reflector streams the whole state again (not a
// LIST): both visible in the reflector's state.
func TestLiveViewDropWatchAndRelistShowInTheReflector(t *testing.T) {
	d := startLiveDemo(t)
	d.waitState(t, "watching", func(st liveview.State) bool { return st.Pipeline.Reflector.Phase == "WATCH" })
	// An event on the watch, so that its end is not a "very short watch"
	// (which the reflector treats as a failure and answers with a new
	// stream).
	code, r := d.press(t, "create-pod")
	require.Equal(t, http.StatusOK, code, r.Message)
	r0 := d.waitState(t, "the ADDED delivered", func(st liveview.State) bool { return st.Pipeline.Indexer == 2 }).Pipeline.Reflector

	code, r = d.press(t, "drop-watch")
	require.Equal(t, http.StatusOK, code, r.Message)
	assert.Contains(t, r.LookFor, "Which request does it send next")
	st := d.waitState(t, "a new WATCH", func(st liveview.State) bool {
		return st.Pipeline.Reflector.Watches > r0.Watches && st.Pipeline.Reflector.Phase == "WATCH"
	})
	assert.Equal(t, r0.Lists, st.Pipeline.Reflector.Lists, "a dropped watch resumes without a LIST")
	assert.Equal(t, r0.Streams, st.Pipeline.Reflector.Streams, "a dropped watch resumes without a new stream")
	assert.Equal(t, "WATCH from "+r0.ResourceVersion, lines(st.Pipeline.Reflector)[len(st.Pipeline.Reflector.Requests)-1])

	// Again an event on the new watch, so that the relist below comes from
	// the 410, not from a very short watch.
	code, r = d.press(t, "create-pod")
	require.Equal(t, http.StatusOK, code, r.Message)
	r1 := d.waitState(t, "the second ADDED delivered", func(st liveview.State) bool { return st.Pipeline.Indexer == 3 }).Pipeline.Reflector
	code, r = d.press(t, "relist")
	require.Equal(t, http.StatusOK, code, r.Message)
	assert.Contains(t, r.LookFor, "how does the rewatch from a compacted resourceVersion end")
	// The event list is made of ended traces, which can come a moment
	// after the reflector's state says WATCH: wait for demo/live-1's
	// LISTED too, or the check below reads the list too early (it did, in
	// a CI run at load 2).
	listedLive1 := func(st liveview.State) *liveview.Event {
		for i, e := range st.Events {
			if e.Key == "demo/live-1" && e.Type == "LISTED" {
				return &st.Events[i]
			}
		}
		return nil
	}
	st = d.waitState(t, "a new stream past its bookmark, watching, and demo/live-1 LISTED in the event list", func(st liveview.State) bool {
		return st.Pipeline.Reflector.Streams > r1.Streams && st.Pipeline.Reflector.Phase == "WATCH" && listedLive1(st) != nil
	})
	rs := st.Pipeline.Reflector
	assert.Greater(t, rs.WatchErrors, r1.WatchErrors, "the rewatch got an ERROR event (410 Expired)")
	assert.Equal(t, r1.Lists, rs.Lists, "a 410 is answered with a stream, not a LIST")
	assert.Equal(t, 3, rs.Streamed, "web-1, live-1, live-2 streamed again")
	l := lines(rs)
	require.GreaterOrEqual(t, len(l), 2)
	assert.Equal(t, "WATCH from "+r1.ResourceVersion+" · ERROR Expired", l[len(l)-2], "%q", l)
	assert.Equal(t, "STREAM from "+r1.ResourceVersion+" · 3 objects · bookmark rv "+rs.Bookmark, l[len(l)-1], "%q", l)
	// The relist's objects have their own traces (LISTED: the initial
	// state's event type, streamed or listed), linked to the entry's
	// RealFIFO.ReplacedAll span.
	listed := listedLive1(st)
	require.NotNil(t, listed, "demo/live-1 streamed again by the relist")
	wf := waterfall(t, d.url, listed.TraceID)
	var links []string
	for _, s := range wf.Spans {
		for _, l := range s.Links {
			links = append(links, l.Name)
		}
	}
	assert.Contains(t, links, tracing.SpanRealFIFOReplacedAll)
	assert.Equal(t, tracing.SpanRootPrefix+"watchlist", wf.Spans[0].Name)
}

func waterfall(t *testing.T, url, traceID string) liveview.Waterfall {
	t.Helper()
	res, err := http.Get(url + "api/trace/" + traceID)
	require.NoError(t, err)
	defer res.Body.Close()
	var wf liveview.Waterfall
	require.NoError(t, json.NewDecoder(res.Body).Decode(&wf))
	return wf
}

// "server cannot stream" makes the embedded server refuse streams (422
// Invalid, as a kube-apiserver whose WatchList feature is off) and forces
// a relist: the reflector box shows the rewatch's 410, the refused stream,
// the LIST it falls back to and the WATCH after it; the source line says
// the server cannot stream. Pressed again, the server streams again, and
// the next relist is a stream.
func TestLiveViewServerCannotStreamShowsTheFallback(t *testing.T) {
	d := startLiveDemo(t)
	d.waitState(t, "watching", func(st liveview.State) bool { return st.Pipeline.Reflector.Phase == "WATCH" })
	code, r := d.press(t, "create-pod") // so the relist comes from the 410, not a very short watch
	require.Equal(t, http.StatusOK, code, r.Message)
	r0 := d.waitState(t, "the ADDED delivered", func(st liveview.State) bool { return st.Pipeline.Indexer == 2 }).Pipeline
	assert.Contains(t, r0.Source, "; the server streams")

	code, r = d.press(t, "no-stream")
	require.Equal(t, http.StatusOK, code, r.Message)
	assert.Contains(t, r.Message, "refuses streams (422 Invalid)")
	assert.Contains(t, r.LookFor, "read the reflector's requests after it")
	st := d.waitState(t, "the fallback: a LIST, then WATCH", func(st liveview.State) bool {
		return st.Pipeline.Reflector.Lists > r0.Reflector.Lists && st.Pipeline.Reflector.Phase == "WATCH"
	}).Pipeline
	assert.Contains(t, st.Source, "; the server cannot stream")
	l := lines(st.Reflector)
	require.GreaterOrEqual(t, len(l), 4, "%q", l)
	rv := r0.Reflector.ResourceVersion
	assert.Equal(t, []string{"WATCH from " + rv + " · ERROR Expired", "STREAM from " + rv + " · 422 Invalid", "LIST from " + rv + " · 2 objects"}, l[len(l)-4:len(l)-1])
	assert.Regexp(t, `^WATCH from \d+$`, l[len(l)-1])
	assert.Equal(t, r0.Reflector.Streams+1, st.Reflector.Streams, "the refused stream is counted")
	assert.Equal(t, []any{liveprobe.FetchedList, 2}, []any{st.Reflector.Fetched, st.Reflector.Listed}, "the state came from the LIST")

	code, r = d.press(t, "no-stream")
	require.Equal(t, http.StatusOK, code, r.Message)
	assert.Contains(t, r.Message, "the server streams again")
	code, r = d.press(t, "create-pod")
	require.Equal(t, http.StatusOK, code, r.Message)
	r1 := d.waitState(t, "the second ADDED delivered", func(st liveview.State) bool { return st.Pipeline.Indexer == 3 }).Pipeline
	assert.Contains(t, r1.Source, "; the server streams")
	code, r = d.press(t, "relist")
	require.Equal(t, http.StatusOK, code, r.Message)
	st = d.waitState(t, "a stream again", func(st liveview.State) bool {
		return st.Pipeline.Reflector.Streams > r1.Reflector.Streams && st.Pipeline.Reflector.Phase == "WATCH"
	}).Pipeline
	assert.Equal(t, r1.Reflector.Lists, st.Reflector.Lists, "streaming again: no LIST")
	l = lines(st.Reflector)
	assert.Regexp(t, `^STREAM from \d+ · 3 objects · bookmark rv \d+$`, l[len(l)-1])
}

// startLoadDemo starts the live demo for a load test, its span store
// keeping at most traces traces, and waits for it to be ready: the cache
// is written before distribute, so it waits for the LIST's change to be
// counted by HandleDeltas and handled by every listener (the controls are
// attached by then), and makes the tunable handler fast. It returns the
// demo and its pipeline before the load.
func startLoadDemo(t *testing.T, traces int) (*liveDemo, liveview.Pipeline) {
	t.Helper()
	var h hooks
	h.liveTraces = traces
	d := startLiveDemoWith(t, h)
	before := d.waitState(t, "synced", func(st liveview.State) bool {
		return st.Pipeline.HandleDeltas == 1 && settled(st.Pipeline, 3)
	}).Pipeline
	code, r := d.press(t, "fast")
	require.Equal(t, http.StatusOK, code, r.Message)
	return d, before
}

// Under load the counters drop nothing (every listener is called once per
// change, HandleDeltas counts every change), and the event list and the
// span store stay at their bounds.
func TestLiveViewUnderLoadDropsNothingAndStaysBounded(t *testing.T) {
	const n = 3000
	const traces = n / 4 // so that the store must evict
	d, before := startLoadDemo(t, traces)

	res, err := http.Post(d.url+fmt.Sprintf("api/control/burst?n=%d", n), "", nil)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	// A minute: 3,000 traced updates take about 3 s here under -race, and
	// a CI run with its other lanes (kube-apiserver, Chromium) beside this
	// one once took over 30.
	st := d.waitStateFor(t, time.Minute, "every update handled by every listener", func(st liveview.State) bool {
		return st.Pipeline.HandleDeltas == before.HandleDeltas+n && settled(st.Pipeline, 3)
	})
	assert.Equal(t, totalCalls(before)+3*n, totalCalls(st.Pipeline), "calls == events * listeners: %+v\n%+v", before, st.Pipeline)
	assert.Len(t, st.Events, liveview.EventWindow)
	assert.LessOrEqual(t, st.TracesKept, traces)
	assert.Positive(t, st.TracesEvicted, "old traces were evicted")
	assert.Equal(t, "MODIFIED", st.Events[0].Type)
}

// On a real cluster (here the embedded server behind a kubeconfig) the
// page shows the informer, and says why there are no controls.
func TestLiveViewOnAClusterHasNoControls(t *testing.T) {
	srv := startServer(t)
	_, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "listed"}})
	require.NoError(t, err)
	d := startLiveDemo(t, "--kubeconfig", kubeconfig(t, srv.URL, false), "--namespace", "prod")
	st := d.waitState(t, "the cluster informer attached and synced", func(st liveview.State) bool {
		return st.Pipeline.HandleDeltas == 1 && settled(st.Pipeline, 3)
	})
	assert.Contains(t, st.Pipeline.Source, "cluster "+srv.URL)
	// The reflector box is the probe's, as on the embedded server: the
	// stream, watching on past its bookmark.
	rs := d.waitState(t, "the cluster informer's reflector watching", func(st liveview.State) bool {
		return st.Pipeline.Reflector.Phase == "WATCH"
	}).Pipeline.Reflector
	assert.Equal(t, []int{1, 0, 0}, []int{rs.Streams, rs.Lists, rs.Watches}, "streams, lists, watches")
	require.Len(t, rs.Requests, 1)
	assert.Equal(t, "STREAM from the latest · 1 object · bookmark rv "+rs.Bookmark, rs.Requests[0].String())
	assert.NotEmpty(t, rs.ResourceVersion)
	code, r := d.press(t, "create-pod")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Contains(t, r.Message, "no controls on a real cluster")
	res := d.stop()
	assert.Equal(t, 0, res.code, res.stderr)
}

func TestLiveViewFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--ui-addr", "127.0.0.1:0"}, "--ui-addr needs --ui"},
		{[]string{"--ui", "--scenario", "basic"}, "--scenario is for the scripted run"},
		{[]string{"--ui", "--ui-addr", "not an address"}, "--ui-addr not an address"},
	} {
		r := runDemo(t, context.Background(), c.args...)
		assert.NotEqual(t, 0, r.code, "%v", c.args)
		assert.Contains(t, r.stderr, c.want, "%v", c.args)
	}
	// --duration is accepted with --ui on the embedded server, and ends it.
	r := runDemo(t, context.Background(), "--ui", "--ui-addr", "127.0.0.1:0", "--duration", "1ms")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.True(t, strings.Contains(r.stdout, "live view: http://127.0.0.1:"), r.stdout)
}

// With --trace-keys the counters still count every object (they are the
// informer's own), while the event list, read from spans, has the selected
// object only.
func TestLiveViewCountsEveryObjectWhenTracingIsSelective(t *testing.T) {
	d := startLiveDemo(t, "--trace-keys", "demo/live-2")
	before := d.waitState(t, "synced", func(st liveview.State) bool {
		return st.Pipeline.HandleDeltas == 1 && settled(st.Pipeline, 3)
	}).Pipeline
	for range 2 {
		code, r := d.press(t, "create-pod")
		require.Equal(t, http.StatusOK, code, r.Message)
	}
	st := d.waitState(t, "both pods handled, live-2 listed", func(st liveview.State) bool {
		return st.Pipeline.HandleDeltas == before.HandleDeltas+2 && settled(st.Pipeline, 3) &&
			len(st.Events) > 0 && st.Events[0].HandlerCalls == 3
	})
	assert.Equal(t, totalCalls(before)+6, totalCalls(st.Pipeline))
	var keys []string
	for _, e := range st.Events {
		keys = append(keys, e.Key)
	}
	assert.Equal(t, []string{"demo/live-2"}, keys, "web-1 (listed) and live-1 are not traced")
	res := d.stop()
	assert.Equal(t, 0, res.code, res.stderr)
}

// "add a handler" adds a listener that is given each cached object once,
// as a synthetic add, and asks for no resync, as the page's other
// listeners: the factory's 1 s default resync (there for the resync
// lesson's late handler) would otherwise put a "ListAndWatch resync" row in
// the event list every second and keep its call count climbing, so that
// "one call per cached object" would hold for a second at most.
func TestLiveViewAddedHandlerGetsOneCallPerCachedObjectAndNoResync(t *testing.T) {
	d := startLiveDemo(t)
	d.waitState(t, "synced", func(st liveview.State) bool { return settled(st.Pipeline, 3) && st.Pipeline.HandleDeltas == 1 })
	code, r := d.press(t, "create-pod")
	require.Equal(t, http.StatusOK, code, r.Message)
	d.waitState(t, "two pods cached and handled", func(st liveview.State) bool {
		return st.Pipeline.Indexer == 2 && settled(st.Pipeline, 3)
	})
	code, r = d.press(t, "add-handler")
	require.Equal(t, http.StatusOK, code, r.Message)
	assert.Equal(t, "added *demo.extraHandler#3: it is given every cached object as a synthetic add", r.Message)
	d.waitState(t, "the new listener's synthetic adds", func(st liveview.State) bool {
		ls := st.Pipeline.Listeners
		return len(ls) == 4 && ls[3].Calls == 2
	})
	// Three of the factory's default resync periods (1 s): a listener with
	// that default would have had a resync of each pod by now.
	time.Sleep(3 * time.Second)
	st := d.state(t)
	require.Len(t, st.Pipeline.Listeners, 4)
	assert.Equal(t, uint64(2), st.Pipeline.Listeners[3].Calls, "one call per cached object, then nothing while nothing changes")
	roots := map[string]int{}
	for _, e := range st.Events {
		roots[e.Root]++
	}
	assert.Equal(t, map[string]int{"ListAndWatch watchlist": 1, "ListAndWatch watch": 1, "AddEventHandler": 2}, roots)
}

// The "run a controller" control adds the controller's handler, runs the
// burst, and the handler's row carries the workqueue: 6 adds, 4 merged, 2
// reconciles, nothing waiting; the other rows carry none.
func TestLiveViewControllerRowShowsTheWorkqueue(t *testing.T) {
	d := startLiveDemo(t)
	d.waitState(t, "synced", func(st liveview.State) bool { return settled(st.Pipeline, 3) && st.Pipeline.HandleDeltas == 1 })
	code, r := d.press(t, "controller")
	require.Equal(t, http.StatusOK, code, r.Message)
	assert.Contains(t, r.Message, "made 6 adds and 2 reconciles; the workqueue merged 4 adds")
	st := d.state(t)
	var rows []liveview.ListenerState
	for _, l := range st.Pipeline.Listeners {
		if l.Workqueue != nil {
			rows = append(rows, l)
		}
	}
	require.Len(t, rows, 1)
	assert.True(t, strings.HasPrefix(rows[0].Name, lessons.ControllerListener), rows[0].Name)
	w := *rows[0].Workqueue
	assert.Equal(t, liveview.WorkqueueState{Name: "demo-controller", Adds: 6, Merged: 4, Reconciles: 2, LastMicros: w.LastMicros}, w)
	assert.GreaterOrEqual(t, w.LastMicros, float64((200 * time.Millisecond).Microseconds()), "the lesson's reconcile takes 200 ms")
}
