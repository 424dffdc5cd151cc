package kit

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/informer-anatomy/informer-anatomy/demo/demoproc"
	"github.com/informer-anatomy/informer-anatomy/demo/liveview"
)

// LiveView is a running `trace-demo --ui` on its embedded API server: the
// very page a participant watches in the browser, driven through its HTTP
// API (the endpoints the page itself calls). A checker presses the same
// buttons and reads the same numbers, so it needs no browser.
type LiveView struct {
	// URL is the page's address, ending in "/".
	URL string
	t   testing.TB
}

// liveViewLife bounds a LiveView that its test failed to stop: the demo
// ends by itself after this long (its --duration).
const liveViewLife = 5 * time.Minute

// StartLiveView builds cmd/trace-demo (a no-op when the binary is up to
// date), starts `trace-demo --ui --ui-addr 127.0.0.1:0` with extra args,
// waits up to WaitTimeout for the URL it prints, and stops it (as Ctrl-C
// does) when t ends.
func StartLiveView(t testing.TB, args ...string) *LiveView {
	t.Helper()
	args = append([]string{"--duration", liveViewLife.String()}, args...)
	// "kit: " says that the kit, not the participant's answer, could not
	// run the demo.
	bin, err := demoproc.Build()
	if err != nil {
		t.Fatalf("kit: %v", err)
	}
	p, err := demoproc.Start(WaitTimeout, bin, args...)
	if err != nil {
		t.Fatalf("kit: %v", err)
	}
	t.Cleanup(func() { _, _ = p.Stop() })
	return &LiveView{URL: p.URL, t: t}
}

// get decodes the JSON answer of GET path into v.
func (l *LiveView) get(path string, v any) {
	l.t.Helper()
	res, err := http.Get(l.URL + path)
	if err != nil {
		l.t.Fatalf("kit: GET %s: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		l.t.Fatalf("kit: GET %s: %s: %s", path, res.Status, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		l.t.Fatalf("kit: GET %s: %v", path, err)
	}
}

// State is what the page shows now (GET /api/state): the pipeline's
// boxes and the recent events.
func (l *LiveView) State() liveview.State {
	l.t.Helper()
	var st liveview.State
	l.get("api/state", &st)
	return st
}

// WaitState polls State, as the page does, until cond holds, and returns
// that state; after WaitTimeout it fails the test naming what.
func (l *LiveView) WaitState(what string, cond func(liveview.State) bool) liveview.State {
	l.t.Helper()
	var st liveview.State
	WaitFor(l.t, what, func() bool { st = l.State(); return cond(st) })
	return st
}

// Press presses a control by its name (create-pod, burst, slow, fast,
// add-handler, drop-watch, relist, ...: GET /api/controls lists them), with
// n for the one that takes a number (burst), and returns its answer. A
// control that fails fails the test. The controls are there once the page
// shows the informer: wait for that first (Synced).
func (l *LiveView) Press(control string, n int) liveview.ControlResult {
	l.t.Helper()
	url := l.URL + "api/control/" + control
	if n > 0 {
		url += fmt.Sprintf("?n=%d", n)
	}
	res, err := http.Post(url, "", nil)
	if err != nil {
		l.t.Fatalf("kit: pressing %s: %v", control, err)
	}
	defer res.Body.Close()
	var r liveview.ControlResult
	if err := json.NewDecoder(res.Body).Decode(&r); err != nil || res.StatusCode != http.StatusOK {
		l.t.Fatalf("kit: pressing %s: %s: %s (%v)", control, res.Status, r.Message, err)
	}
	return r
}

// Synced waits until the informer has listed and is watching, and every
// listener has handled every change HandleDeltas distributed (call it
// first: a listener added later has handled fewer), and returns that state.
func (l *LiveView) Synced() liveview.State {
	l.t.Helper()
	return l.WaitState("the page to show the informer synced and watching", func(st liveview.State) bool {
		p := st.Pipeline
		if p.Reflector.Phase != "WATCH" || p.HandleDeltas == 0 || !Settled(p) {
			return false
		}
		for _, ls := range p.Listeners {
			if ls.Calls != p.HandleDeltas {
				return false
			}
		}
		return true
	})
}

// Settled reports whether nothing waits anywhere: the queue is empty, no
// listener has anything in its addCh or ring buffer (pending), and the
// first listener, there from the start, has handled every change
// HandleDeltas distributed. (A handler may still be in its last call: a
// checker that needs every call done compares the calls it needs.)
func Settled(p liveview.Pipeline) bool {
	if p.Queue.Depth != 0 || len(p.Listeners) == 0 || p.Listeners[0].Calls != p.HandleDeltas {
		return false
	}
	for _, ls := range p.Listeners {
		if ls.AddCh != 0 || ls.Pending != 0 {
			return false
		}
	}
	return true
}

// Trace is the waterfall of one event (GET /api/trace/<id>): what the page
// opens when the event is clicked.
func (l *LiveView) Trace(traceID string) liveview.Waterfall {
	l.t.Helper()
	var wf liveview.Waterfall
	l.get("api/trace/"+traceID, &wf)
	return wf
}
