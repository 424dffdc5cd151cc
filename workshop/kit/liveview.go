package kit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informer-anatomy/informer-anatomy/internal/liveview"
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
// waits for the URL it prints, and stops it (as Ctrl-C does) when t ends.
func StartLiveView(t testing.TB, args ...string) *LiveView {
	t.Helper()
	bin := buildTraceDemo(t)
	args = append([]string{"--ui", "--ui-addr", "127.0.0.1:0", "--duration", liveViewLife.String()}, args...)
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("kit: cannot start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	urls := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`live view: (http://\S+)`)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	l := &LiveView{t: t}
	select {
	case l.URL = <-urls:
	case err := <-exited:
		t.Fatalf("kit: trace-demo %s ended before printing its URL (%v):\n%s", strings.Join(args, " "), err, stderr.String())
	case <-time.After(WaitTimeout):
		_ = cmd.Process.Kill()
		t.Fatalf("kit: trace-demo printed no URL within %v:\n%s", WaitTimeout, stderr.String())
	}
	t.Cleanup(func() {
		// Interrupt is Ctrl-C; where a process cannot be sent one
		// (Windows), it is killed.
		if runtime.GOOS == "windows" || cmd.Process.Signal(os.Interrupt) != nil {
			_ = cmd.Process.Kill()
		}
		select {
		case <-exited:
		case <-time.After(WaitTimeout):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	return l
}

// buildTraceDemo builds cmd/trace-demo of the module the test runs in,
// into a directory of the temporary directory named after the module's
// path, where the go command finds it up to date on the next call instead
// of linking it again (a few seconds each time).
func buildTraceDemo(t testing.TB) string {
	t.Helper()
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(gomod)) == "" || strings.TrimSpace(string(gomod)) == os.DevNull {
		t.Fatalf("kit: cannot find the module (go env GOMOD: %q, %v): run the checker inside the checkout", gomod, err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	sum := sha256.Sum256([]byte(root))
	bin := filepath.Join(os.TempDir(), "informer-anatomy-workshop-"+hex.EncodeToString(sum[:6]), "trace-demo")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/trace-demo")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kit: go build ./cmd/trace-demo: %v\n%s", err, out)
	}
	return bin
}

// lockedBuffer is a bytes.Buffer written by a process and read by a test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
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
