package dropin_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// noRedirects is a client that returns a redirect as it is, so that the
// test sees where it points.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Through `kubectl port-forward` to any local port: the page, its files,
// its state and (opted in) its one POST answer a browser that opened
// http://localhost:<local>/ (or 127.0.0.1, or [::1]), the Host it sends
// naming the forward's port, not the controller's. Before, every request
// was refused 403: the port was not the listener's. A rebinding name is
// still refused, through the forward as on the listener itself, and so is
// a cross-origin POST.
func TestLiveViewThroughPortForward(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/debug/informers/", dropin.LiveViewHandler(dropin.LiveViewTraceOneKey()))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	local := testutil.PortForward(t, hs.Listener.Addr().String())
	_, served, _ := net.SplitHostPort(hs.Listener.Addr().String())
	require.NotEqual(t, served, local)
	via := "http://127.0.0.1:" + local + "/debug/informers/"

	for _, host := range []string{"localhost:" + local, "127.0.0.1:" + local, "[::1]:" + local, "LOCALHOST.:" + local} {
		code, _, body := liveGet(t, noRedirects, http.MethodGet, via, map[string]string{"Host": host})
		require.Equal(t, http.StatusOK, code, "Host %s, the page: %s", host, body)
		assert.Contains(t, body, `src="app.js"`, "Host %s", host)
		for _, rel := range []string{"app.js", "app.css", "api/controls", "api/history"} {
			code, _, body = liveGet(t, noRedirects, http.MethodGet, via+rel, map[string]string{"Host": host})
			assert.Equal(t, http.StatusOK, code, "Host %s, %s: %s", host, rel, body)
		}
		code, _, body = liveGet(t, noRedirects, http.MethodGet, via+"api/state", map[string]string{"Host": host})
		require.Equal(t, http.StatusOK, code, "Host %s, api/state: %s", host, body)
		var st livepage.ProcessState
		require.NoError(t, json.Unmarshal([]byte(body), &st), body)
		assert.True(t, st.TraceKeyControl)
	}

	// The page's own POST, as the browser sends it through the forward:
	// its Origin is the forward's.
	t.Cleanup(func() {
		liveGet(t, http.DefaultClient, http.MethodPost, hs.URL+"/debug/informers/api/trace-key?key=", nil)
	})
	own := "http://localhost:" + local
	code, _, body := liveGet(t, noRedirects, http.MethodPost, via+"api/trace-key?key=ns/forwarded",
		map[string]string{"Host": "localhost:" + local, "Origin": own, "Sec-Fetch-Site": "same-origin"})
	require.Equal(t, http.StatusOK, code, body)
	code, _, body = liveGet(t, noRedirects, http.MethodPost, via+"api/trace-key?key=",
		map[string]string{"Host": "localhost:" + local, "Origin": "http://evil.example:" + local, "Sec-Fetch-Site": "cross-site"})
	assert.Equal(t, http.StatusForbidden, code, "a cross-origin POST through the forward: %s", body)
	code, _, body = liveGet(t, noRedirects, http.MethodGet, via+"api/state", map[string]string{"Host": "localhost:" + local})
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"ns/forwarded"`, "the refused POST changed nothing")

	for _, host := range []string{"evil.example:" + local, "evil.example:" + served, "localhost.evil.example:" + local, "127.0.0.1.nip.io:" + local, "10.1.2.3:" + local} {
		for _, u := range []string{via + "api/state", hs.URL + "/debug/informers/api/state"} {
			code, _, body := liveGet(t, noRedirects, http.MethodGet, u, map[string]string{"Host": host})
			assert.Equal(t, http.StatusForbidden, code, "Host %s, %s: %s", host, u, body)
			assert.NotContains(t, body, "informers\":", "Host %s: no state", host)
		}
	}
}

// resolve is where a browser goes from at with a Location header: as the
// URL standard reads it, a backslash in an http URL is a slash.
func resolve(t *testing.T, at *url.URL, location string) *url.URL {
	t.Helper()
	ref, err := url.Parse(strings.ReplaceAll(location, `\`, "/"))
	require.NoError(t, err, location)
	return at.ResolveReference(ref)
}

// The handler mounts anywhere: at "/", under a prefix on a plain mux, and
// behind http.StripPrefix with the prefix's slash or without it. In each,
// the page is served at the mount point, every URL it fetches relative
// to itself answers (its files, its state, its history, and the one POST),
// the mount point without its slash is redirected to it, and no request,
// however its path is spelled, is redirected off the page's own path or
// to another host. Before, at "/" or behind StripPrefix("/debug/informers"),
// GET /%5Cevilhost was redirected to /\evilhost/, which a browser reads as
// http://evilhost/; behind StripPrefix("/debug/informers/") the page loaded
// and every API call went to a 404 at api/api/state/.
func TestLiveViewMountsAnywhere(t *testing.T) {
	h := dropin.LiveViewHandler(dropin.LiveViewTraceOneKey())
	mounts := []struct {
		name, base string
		handler    func() http.Handler
	}{
		{"at /", "/", func() http.Handler { return h }},
		{"under a prefix", "/debug/informers/", func() http.Handler {
			mux := http.NewServeMux()
			mux.Handle("/debug/informers/", h)
			return mux
		}},
		{"behind StripPrefix without the slash", "/debug/informers/", func() http.Handler {
			mux := http.NewServeMux()
			mux.Handle("/debug/informers/", http.StripPrefix("/debug/informers", h))
			return mux
		}},
		{"behind StripPrefix with the slash", "/debug/informers/", func() http.Handler {
			mux := http.NewServeMux()
			mux.Handle("/debug/informers/", http.StripPrefix("/debug/informers/", h))
			return mux
		}},
		{"behind StripPrefix at an exact path", "/live/", func() http.Handler {
			mux := http.NewServeMux()
			mux.Handle("/live", http.StripPrefix("/live", h))
			mux.Handle("/live/", http.StripPrefix("/live", h))
			return mux
		}},
	}
	for _, m := range mounts {
		t.Run(m.name, func(t *testing.T) {
			hs := httptest.NewServer(m.handler())
			t.Cleanup(hs.Close)
			page, err := url.Parse(hs.URL + m.base)
			require.NoError(t, err)
			code, _, body := liveGet(t, noRedirects, http.MethodGet, page.String(), nil)
			require.Equal(t, http.StatusOK, code, body)
			require.Contains(t, body, `src="app.js"`, "the page at %s", m.base)
			for _, rel := range []string{"app.js", "app.css", "api/state", "api/history", "api/controls"} {
				u := resolve(t, page, rel)
				code, _, body := liveGet(t, noRedirects, http.MethodGet, u.String(), nil)
				assert.Equal(t, http.StatusOK, code, "%s (the page's %q): %.200s", u.Path, rel, body)
			}
			t.Cleanup(func() {
				liveGet(t, http.DefaultClient, http.MethodPost, resolve(t, page, "api/trace-key?key=").String(), nil)
			})
			code, _, body = liveGet(t, noRedirects, http.MethodPost, resolve(t, page, "api/trace-key?key=ns/mounted").String(), nil)
			assert.Equal(t, http.StatusOK, code, "the page's POST: %s", body)

			if m.base != "/" {
				bare := strings.TrimSuffix(page.String(), "/")
				code, hdr, body := liveGet(t, noRedirects, http.MethodGet, bare, nil)
				require.True(t, code == http.StatusMovedPermanently || code == http.StatusTemporaryRedirect, "%s: %d %s", bare, code, body)
				at, _ := url.Parse(bare)
				assert.Equal(t, page.String(), resolve(t, at, hdr.Get("Location")).String(), "the mount point without its slash goes to the page")
			}
			for _, probe := range []string{`%5Cevilhost`, `%5C%5Cevilhost`, `%5Cevilhost/`, `%5Cevilhost%2F`, `%2F%2Fevilhost`,
				`x%5C..%5C..%5Cevilhost`, `%2e%2e`, `%2E%2E%5C%2E%2E`, `..%5Cevilhost`, `.%5Cevilhost`, `evil.host:80`, `javascript:alert(1)`,
				`%09%5Cevilhost`, `a/%5Cevilhost`, `http:%5C%5Cevilhost`} {
				at, err := url.Parse(page.String() + probe)
				require.NoError(t, err, probe)
				code, hdr, _ := liveGet(t, noRedirects, http.MethodGet, at.String(), nil)
				if code < 300 || code >= 400 {
					continue
				}
				loc := hdr.Get("Location")
				to := resolve(t, at, loc)
				assert.Equal(t, page.Host, to.Host, "%s%s redirected to %q: another host", m.base, probe, loc)
				assert.Equal(t, "http", to.Scheme, "%s%s redirected to %q", m.base, probe, loc)
				assert.True(t, strings.HasPrefix(to.EscapedPath(), page.EscapedPath()), "%s%s redirected to %q (%s): off the page's path", m.base, probe, loc, to)
				assert.Equal(t, at.Path+"/", to.Path, "%s%s: a redirect only adds the slash", m.base, probe)
			}
		})
	}
}

// rewritingProxy is the proxy docs/07 warns of: SetURL alone, which sends
// the controller's address as Host.
func rewritingProxy(target *url.URL) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }}
}

// What docs/07 says of a reverse proxy in front of the page: one that
// rewrites Host to the controller's address (httputil.ReverseProxy with
// SetURL) lets a DNS-rebinding page read it, since every request then
// names the controller; the docs' proxy, which keeps the client's Host
// (liveViewProxy), keeps the page's check: a rebinding name is refused, a
// browser on localhost is served.
func TestLiveViewBehindAReverseProxy(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/debug/informers/", dropin.LiveViewHandler())
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	target, err := url.Parse(hs.URL)
	require.NoError(t, err)
	through := func(p *httputil.ReverseProxy, host string) int {
		ps := httptest.NewServer(p)
		defer ps.Close()
		_, port, _ := net.SplitHostPort(ps.Listener.Addr().String())
		code, _, _ := liveGet(t, noRedirects, http.MethodGet, ps.URL+"/debug/informers/api/state", map[string]string{"Host": strings.ReplaceAll(host, "PORT", port)})
		return code
	}
	assert.Equal(t, http.StatusOK, through(rewritingProxy(target), "evil.example:PORT"),
		"the hazard the docs name: SetURL alone hides the browser's Host from the page")
	assert.Equal(t, http.StatusForbidden, through(liveViewProxy(target), "evil.example:PORT"), "the docs' proxy keeps the check")
	assert.Equal(t, http.StatusOK, through(liveViewProxy(target), "localhost:PORT"), "and serves a browser on this machine")
}
