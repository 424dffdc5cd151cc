package liveview

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// testServer serves a page with one control of each kind on a real
// loopback listener, through Listen and Serve as the demo does, and
// counts the controls' runs.
type testServer struct {
	url   string // http://127.0.0.1:<port>/
	addr  string // 127.0.0.1:<port>
	port  string
	runs  atomic.Int64
	lastN atomic.Int64
}

func startTestServer(t *testing.T, addr string) *testServer {
	t.Helper()
	ts := &testServer{}
	controls := []Control{
		{Name: "press", Label: "press", Do: func(context.Context, int) (string, error) { ts.runs.Add(1); return "pressed", nil }},
		{Name: "burst", Label: "burst", Param: "how many", Max: 1000, Do: func(_ context.Context, n int) (string, error) {
			ts.runs.Add(1)
			ts.lastN.Store(int64(n))
			return fmt.Sprint(n), nil
		}},
		{Name: "busy", Do: func(context.Context, int) (string, error) { return "", Busy("busy: another control is running") }},
		{Name: "invalid", Do: func(context.Context, int) (string, error) { return "", Invalid("too many for a slow handler") }},
		{Name: "stopping", Do: func(context.Context, int) (string, error) { return "", fmt.Errorf("stopped: %w", context.Canceled) }},
		{Name: "broken", Do: func(context.Context, int) (string, error) { return "", errors.New("the API server said no") }},
	}
	srv := NewServer(Options{Pipeline: func() Pipeline { return Pipeline{Informer: "pods"} }, Spans: NewSpanStore(1),
		Controls: func() ([]Control, string) { return controls, "" }, SpansDropped: func() int64 { return 7 }})
	ln, url, _, err := Listen(addr)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, srv) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	ts.url, ts.addr = url, ln.Addr().String()
	_, ts.port, _ = net.SplitHostPort(ts.addr)
	return ts
}

// do sends method path with the given headers (Host among them, if set)
// and returns the status and the body.
func (ts *testServer) do(t *testing.T, method, path string, headers map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.url+path, strings.NewReader(""))
	require.NoError(t, err)
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, res.Header, string(b)
}

func message(t *testing.T, body string) string {
	t.Helper()
	var r ControlResult
	require.NoError(t, json.Unmarshal([]byte(body), &r), body)
	return r.Message
}

// A page of another site can send a "simple" POST (no CORS preflight) to
// the live view: a browser marks it (Sec-Fetch-Site: cross-site, and an
// Origin that is not the live view's), and the server refuses it before
// the control runs. The page's own presses (same-origin), and requests
// from no browser at all (the workshop kit, curl: neither header) run.
func TestCrossSitePOSTIsRefusedSameOriginRuns(t *testing.T) {
	ts := startTestServer(t, "127.0.0.1:0")
	origin := "http://" + ts.addr
	for _, c := range []struct {
		name    string
		headers map[string]string
		ok      bool
	}{
		{"cross-site, a modern browser", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example", "Content-Type": "text/plain"}, false},
		{"same-site, another port's page", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:1"}, false},
		{"cross-site, an old browser: Origin only", map[string]string{"Origin": "https://evil.example", "Content-Type": "text/plain"}, false},
		{"the page itself", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": origin}, true},
		{"the page itself, an old browser", map[string]string{"Origin": origin}, true},
		{"no browser (the workshop kit, curl)", nil, true},
	} {
		before := ts.runs.Load()
		code, _, body := ts.do(t, http.MethodPost, "api/control/press", c.headers)
		if c.ok {
			assert.Equal(t, http.StatusOK, code, "%s: %s", c.name, body)
			assert.Equal(t, before+1, ts.runs.Load(), "%s: the control ran", c.name)
			continue
		}
		assert.Equal(t, http.StatusForbidden, code, "%s: %s", c.name, body)
		assert.Contains(t, message(t, body), "refused: a cross-origin request", c.name)
		assert.Equal(t, before, ts.runs.Load(), "%s: the control did not run", c.name)
	}
	// Reading is not changing: a cross-site GET of the page is answered
	// (the browser keeps its answer from the other site's script).
	code, _, _ := ts.do(t, http.MethodGet, "api/controls", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"})
	assert.Equal(t, http.StatusOK, code)
}

// A request addressed to another name (a DNS-rebinding page sends its own
// domain as Host) is refused on every path, reading included: /api/state
// holds the cluster's URL and object keys on --cluster. The served address,
// localhost and the other loopback forms of it are answered, on any port
// (a port-forward's or a tunnel's: TestPortForwardReachesThePage).
func TestForeignHostIsRefused(t *testing.T) {
	ts := startTestServer(t, "127.0.0.1:0")
	for _, host := range []string{"evil.example:" + ts.port, "evil.example", "127.0.0.1.nip.io:" + ts.port, "evil.example:1", "10.1.2.3:" + ts.port, "localhost.evil.example:" + ts.port} {
		for _, path := range []string{"", "app.js", "api/state", "api/controls"} {
			code, _, body := ts.do(t, http.MethodGet, path, map[string]string{"Host": host})
			assert.Equal(t, http.StatusForbidden, code, "Host %s, /%s: %s", host, path, body)
			assert.Contains(t, body, "refused: this live view serves "+ts.addr, "Host %s", host)
		}
		before := ts.runs.Load()
		code, _, _ := ts.do(t, http.MethodPost, "api/control/press", map[string]string{"Host": host})
		assert.Equal(t, http.StatusForbidden, code, "Host %s, POST", host)
		assert.Equal(t, before, ts.runs.Load(), "Host %s: the control did not run", host)
	}
	for _, host := range []string{ts.addr, "localhost:" + ts.port, "LOCALHOST:" + ts.port, "localhost.:" + ts.port, "127.0.0.2:" + ts.port, "[::1]:" + ts.port,
		"localhost:1", "127.0.0.1:1", "[::1]:9999"} {
		code, _, body := ts.do(t, http.MethodGet, "api/state", map[string]string{"Host": host})
		assert.Equal(t, http.StatusOK, code, "Host %s: %s", host, body)
	}
}

// Off loopback (a room), the page is opened by the machine's IP address
// or name on its port, or by a loopback name on any (a tunnel's: no
// rebinding page can send one); a rebinding name is still refused.
func TestHostPolicyOffLoopback(t *testing.T) {
	p := livepage.HostPolicy{Port: "7070", AnyIP: true, Names: map[string]bool{"teacher-laptop": true}}
	for host, ok := range map[string]bool{
		"192.168.1.20:7070": true, "[fe80::1]:7070": true, "localhost:7070": true, "Teacher-Laptop:7070": true,
		"evil.example:7070": false, "192.168.1.20:7071": false, "teacher-laptop.evil.example:7070": false, "teacher-laptop:7071": false,
	} {
		assert.Equal(t, ok, p.Allows(host), host)
	}
	one := livepage.HostPolicy{Port: "7070", IP: net.ParseIP("192.168.1.20"), Names: map[string]bool{}}
	assert.True(t, one.Allows("192.168.1.20:7070"))
	assert.False(t, one.Allows("192.168.1.21:7070"), "another IP is another server")
	assert.True(t, one.Allows("localhost:7070"), "a tunnel from this machine")
	assert.True(t, one.Allows("localhost:9999"), "a tunnel from another local port")
}

// The demo's page through a port-forward to another local port (the demo
// in a pod, or on a remote machine behind an SSH tunnel): the browser's
// Host names the forward's port, and the page, its files, its state and
// its controls (the page's own POST, whose Origin is the forward's) answer.
// Before, every request was refused 403. A rebinding name through the
// forward is refused; and no path, however spelled, is redirected off the
// page or to another host.
func TestPortForwardReachesThePage(t *testing.T) {
	ts := startTestServer(t, "127.0.0.1:0")
	local := testutil.PortForward(t, ts.addr)
	via := "http://127.0.0.1:" + local + "/"
	send := func(method, path string, headers map[string]string) (int, http.Header, string) {
		req, err := http.NewRequest(method, via+path, nil)
		require.NoError(t, err)
		for k, v := range headers {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		res, err := noRedirects.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, res.Header, string(b)
	}
	for _, host := range []string{"localhost:" + local, "127.0.0.1:" + local, "[::1]:" + local} {
		for _, path := range []string{"", "app.js", "api/state", "api/controls"} {
			code, _, body := send(http.MethodGet, path, map[string]string{"Host": host})
			assert.Equal(t, http.StatusOK, code, "Host %s, /%s: %.200s", host, path, body)
		}
	}
	before := ts.runs.Load()
	code, _, body := send(http.MethodPost, "api/control/press",
		map[string]string{"Host": "localhost:" + local, "Origin": "http://localhost:" + local, "Sec-Fetch-Site": "same-origin"})
	assert.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, before+1, ts.runs.Load(), "the page's own press ran")
	code, _, _ = send(http.MethodPost, "api/control/press",
		map[string]string{"Host": "localhost:" + local, "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"})
	assert.Equal(t, http.StatusForbidden, code, "a cross-site POST through the forward")
	for _, host := range []string{"evil.example:" + local, "localhost.evil.example:" + local} {
		code, _, body := send(http.MethodGet, "api/state", map[string]string{"Host": host})
		assert.Equal(t, http.StatusForbidden, code, "Host %s: %s", host, body)
	}
	assert.Equal(t, before+1, ts.runs.Load(), "no refused press ran")

	for _, probe := range []string{`%5Cevilhost`, `%5C%5Cevilhost`, `%2F%2Fevilhost`, `%5Cevilhost/`, `index.html`, `x%5Cindex.html`, `javascript:alert(1)`} {
		code, hdr, _ := send(http.MethodGet, probe, map[string]string{"Host": "localhost:" + local})
		if code < 300 || code >= 400 {
			continue
		}
		at, _ := url.Parse(via + probe)
		ref, err := url.Parse(strings.ReplaceAll(hdr.Get("Location"), `\`, "/")) // a browser reads \ as /
		require.NoError(t, err)
		to := at.ResolveReference(ref)
		assert.Equal(t, at.Host, to.Host, "/%s redirected to %q", probe, hdr.Get("Location"))
		assert.Equal(t, "http", to.Scheme, "/%s redirected to %q", probe, hdr.Get("Location"))
	}
}

// noRedirects returns a redirect as it is, to see where it points.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Every answer forbids framing (the controls clicked through a decoy),
// carries a content security policy that allows the page's own files and
// nothing inline, and no MIME sniffing.
func TestSecurityHeadersOnEveryAnswer(t *testing.T) {
	ts := startTestServer(t, "127.0.0.1:0")
	for _, c := range []struct {
		method, path string
		headers      map[string]string
	}{
		{http.MethodGet, "", nil}, {http.MethodGet, "app.js", nil}, {http.MethodGet, "app.css", nil}, {http.MethodGet, "api/state", nil},
		{http.MethodGet, "api/trace/nope", nil}, {http.MethodGet, "no-such-file", nil}, {http.MethodPost, "api/control/press", nil},
		{http.MethodPost, "api/control/press", map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{http.MethodGet, "api/state", map[string]string{"Host": "evil.example:" + ts.port}},
	} {
		_, h, _ := ts.do(t, c.method, c.path, c.headers)
		what := c.method + " /" + c.path
		assert.Equal(t, "DENY", h.Get("X-Frame-Options"), what)
		csp := h.Get("Content-Security-Policy")
		assert.Contains(t, csp, "frame-ancestors 'none'", what)
		assert.Contains(t, csp, "default-src 'none'", what)
		assert.Contains(t, csp, "script-src 'self'", what)
		assert.Contains(t, csp, "style-src 'self'", what)
		assert.Contains(t, csp, "connect-src 'self'", what)
		assert.NotContains(t, csp, "unsafe-inline", what)
		assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"), what)
	}
	// The policy fits the page: no inline script, style or handler for it
	// to block (the browser test checks the page runs under it).
	page := get(t, ts.url)
	assert.NotRegexp(t, `<script>|<script [^>]*>[^<]|<style|style=|\son[a-z]+=`, page)
}

// A control's answer says what happened with the right status: busy is a
// 503 (try again), an impossible request a 400, a demo that is stopping a
// 503; only a real failure is a 500.
func TestControlErrorsHaveTheirStatus(t *testing.T) {
	ts := startTestServer(t, "127.0.0.1:0")
	for name, want := range map[string]int{"busy": 503, "invalid": 400, "stopping": 503, "broken": 500, "press": 200} {
		code, _, body := ts.do(t, http.MethodPost, "api/control/"+name, nil)
		assert.Equal(t, want, code, "%s: %s", name, body)
	}
	code, _, body := ts.do(t, http.MethodPost, "api/control/busy", nil)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "busy: another control is running", message(t, body))
}

// ?n= is a plain number from 1 to the control's Max: anything else is a 400
// saying what was wrong, and the control does not run with a number it
// was not given ("10abc" was read as 10).
func TestControlNumberIsParsedStrictly(t *testing.T) {
	ts := startTestServer(t, "127.0.0.1:0")
	for _, c := range []struct{ n, want string }{
		{"10abc", `got "10abc": digits only`},
		{"-5", `got "-5": digits only`},
		{"+5", `got "+5": digits only`},
		{"1e3", `got "1e3": digits only`},
		{" 5", `got " 5": digits only`},
		{"", `got "": digits only`},
		{"0", "got 0"},
		{"1001", "got 1001: more than 1000"},
		{"99999999999999999999999", "got 99999999999999999999999: more than 1000"},
	} {
		code, _, body := ts.do(t, http.MethodPost, "api/control/burst?n="+url.QueryEscape(c.n), nil)
		assert.Equal(t, http.StatusBadRequest, code, "n=%q: %s", c.n, body)
		msg := message(t, body)
		assert.Contains(t, msg, "burst wants ?n= a whole number from 1 to 1000 (how many)", "n=%q", c.n)
		assert.Contains(t, msg, c.want, "n=%q", c.n)
	}
	code, _, body := ts.do(t, http.MethodPost, "api/control/burst", nil)
	assert.Equal(t, http.StatusBadRequest, code, body)
	code, _, body = ts.do(t, http.MethodPost, "api/control/burst?n=1&n=2", nil)
	assert.Equal(t, http.StatusBadRequest, code, body)
	assert.Zero(t, ts.runs.Load(), "no bad number ran the control")

	code, _, body = ts.do(t, http.MethodPost, "api/control/burst?n=1000", nil)
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, int64(1000), ts.lastN.Load())
	code, _, body = ts.do(t, http.MethodPost, "api/control/press?n=3", nil)
	assert.Equal(t, http.StatusBadRequest, code, body)
	assert.Contains(t, message(t, body), "press takes no ?n=")
}

// The page's data endpoint carries the exporter's drop count.
func TestStateCarriesTheSpansDropped(t *testing.T) {
	ts := startTestServer(t, "127.0.0.1:0")
	_, _, body := ts.do(t, http.MethodGet, "api/state", nil)
	var st State
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	assert.Equal(t, int64(7), st.SpansDropped)
}

// A keep-alive connection left idle is closed by the server (a closed tab
// no longer holds one forever).
func TestIdleConnectionIsClosed(t *testing.T) {
	old := timeouts
	timeouts.idle = 200 * time.Millisecond
	t.Cleanup(func() { timeouts = old })
	ts := startTestServer(t, "127.0.0.1:0")
	c, err := net.Dial("tcp", ts.addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = fmt.Fprintf(c, "GET /api/controls HTTP/1.1\r\nHost: %s\r\n\r\n", ts.addr)
	require.NoError(t, err)
	r := bufio.NewReader(c)
	res, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	// A deadline to fail by: without an idle timeout the read blocks until
	// it, and fails with a timeout instead of the server's close.
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = r.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "the server closed the idle connection")
}

// A taken port (the default 7070 on a shared machine) is an error that
// says so and names the way out.
func TestTakenPortSuggestsAnyFreePort(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	_, _, _, err = Listen(taken.Addr().String())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the port is taken")
	assert.Contains(t, err.Error(), "--ui-addr 127.0.0.1:0")
}
