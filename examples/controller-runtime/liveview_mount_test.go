package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

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
	local := testutil.PortForward(t, bound.GetBindAddr())
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
