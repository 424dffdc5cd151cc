package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// portForward does what `kubectl port-forward pod/manager 9999:8080` does
// for the browser: a listener on another loopback port copying raw TCP,
// both ways, to target. It returns the forward's port.
func portForward(t *testing.T, target string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			wg.Go(func() { _, _ = io.Copy(out, in); _ = out.Close() })
			wg.Go(func() { _, _ = io.Copy(in, out); _ = in.Close() })
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	_, port, err := net.SplitHostPort(ln.Addr().String())
	require.NoError(t, err)
	return port
}

// The live view on the manager's metrics server (ExtraHandlers, as
// ManagerOptions mounts it), reached as users reach a manager in a
// cluster: through a port-forward to another local port, the browser
// naming localhost:<local> as Host. The page, its files and its state
// answer; a rebinding name is refused; and no path under the mount point,
// however spelled, is redirected off it or to another host. Before, the
// forward got 403 on everything (the Host's port was not the server's).
func TestMetricsServerLiveViewThroughPortForward(t *testing.T) {
	opts := ManagerOptions("").Metrics
	opts.BindAddress = "127.0.0.1:0"
	srv, err := metricsserver.NewServer(opts, nil, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { require.NoError(t, srv.Start(ctx)) })
	defer func() { cancel(); wg.Wait() }()
	bound := srv.(interface{ GetBindAddr() string })
	require.Eventually(t, func() bool { return bound.GetBindAddr() != "" }, 5e9, 1e6, "the metrics server listens")
	local := portForward(t, bound.GetBindAddr())
	page := "http://127.0.0.1:" + local + LiveViewPath
	noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u, host string) (int, http.Header, string) {
		req, err := http.NewRequest(http.MethodGet, u, nil)
		require.NoError(t, err)
		req.Host = host
		res, err := noRedirects.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, res.Header, string(b)
	}

	host := "localhost:" + local
	code, _, body := get(page, host)
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `src="app.js"`)
	for _, rel := range []string{"app.js", "api/state", "api/history"} {
		code, _, body := get(page+rel, host)
		assert.Equal(t, http.StatusOK, code, "%s: %.200s", rel, body)
	}
	code, _, body = get(page+"api/state", "evil.example:"+local)
	assert.Equal(t, http.StatusForbidden, code, "a rebinding name through the forward: %s", body)

	for _, probe := range []string{`%5Cevilhost`, `%5C%5Cevilhost`, `%2F%2Fevilhost`, `x%5C..%5C..%5Cevilhost`, `%2e%2e`, `javascript:alert(1)`} {
		at, err := url.Parse(page + probe)
		require.NoError(t, err)
		code, hdr, _ := get(at.String(), host)
		if code < 300 || code >= 400 {
			continue
		}
		ref, err := url.Parse(strings.ReplaceAll(hdr.Get("Location"), `\`, "/")) // a browser reads \ as /
		require.NoError(t, err)
		to := at.ResolveReference(ref)
		assert.Equal(t, at.Host, to.Host, "%s redirected to %q", probe, hdr.Get("Location"))
		assert.True(t, strings.HasPrefix(to.Path, LiveViewPath), "%s redirected to %q: off the page's path", probe, hdr.Get("Location"))
	}
}
