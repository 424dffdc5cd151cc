//go:build browser

package browser

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// evilSite is the name the browser resolves to 127.0.0.1 (Chromium's
// --host-resolver-rules), as an attacker's domain does after DNS
// rebinding: a site of its own to the browser, this machine to the
// network.
const evilSite = "evil.example"

// evilPage is another site's page that tries the live view from the
// user's browser: a "simple" cross-site POST by fetch (no CORS preflight),
// a form that POSTs to a control, and a frame of the page.
const evilPage = `<!doctype html><html><head><title>evil</title></head><body>
<form id="f" method="POST" action="%[1]sapi/control/create-pod" enctype="text/plain"><input name="x" value="y"></form>
<iframe id="frame" src="%[1]s"></iframe>
<script>
fetch("%[1]sapi/control/create-pod", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: "x"})
  .then(() => { document.title = "answered"; }, (e) => { document.title = "failed: " + e; });
</script></body></html>`

// evalString evaluates expr on the tab.
func (p *page) evalString(expr string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, waitTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		p.failed("evaluating "+expr, err)
	}
	return v
}

// waitText waits until the tab's document text contains want, and returns
// that text.
func (p *page) waitText(what, want string) string {
	p.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		text := p.evalString(`document.body ? document.body.innerText : ""`)
		if strings.Contains(text, want) {
			return text
		}
		if time.Now().After(deadline) {
			p.failed("waiting for "+what, fmt.Errorf("%q not in the page's text %q", want, text))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The live view in Chromium refuses what another site's page tries from
// the user's browser: a cross-site POST (by fetch and by a form) runs no
// control, a frame of the page is not shown, and a page reached by a
// rebound name (an attacker's domain resolving to 127.0.0.1) gets nothing,
// the data endpoint included. The page's own buttons (same-origin) still
// work, and its content security policy is in force (an inline script is
// blocked) while the page itself breaks none of it.
func TestLiveViewRefusesOtherSitesInChromium(t *testing.T) {
	d := startDemo(t)
	_, port, err := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(d.URL, "http://"), "/"))
	require.NoError(t, err)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, evilPage, d.URL)
	}))
	t.Cleanup(evil.Close)
	_, evilPort, err := net.SplitHostPort(strings.TrimPrefix(evil.URL, "http://"))
	require.NoError(t, err)

	p := openPage(t, d, "origin", chromedp.Flag("host-resolver-rules", "MAP "+evilSite+" 127.0.0.1"))
	p.waitFor("the informer synced, its controls shown", func(s shown) bool {
		return s.Phase == "WATCH" && s.Indexer == 1 && s.settled(3, 1) && slices.Contains(s.Controls, "create-pod")
	})
	require.Empty(t, p.consoleErrors(), "the page itself breaks no policy and logs no error")
	// The policy is in force: a script added inline does not run.
	p.evalString(`(() => { const s = document.createElement("script"); s.textContent = 'document.title = "inline ran"'; document.body.appendChild(s); return ""; })()`)
	assert.NotEqual(t, "inline ran", p.evalString(`document.title`), "an inline script is blocked by the page's policy")
	assert.Eventually(t, func() bool {
		return slices.ContainsFunc(p.consoleErrors(), func(e string) bool { return strings.Contains(e, "Content Security Policy") })
	}, waitTimeout, 50*time.Millisecond, "the blocked script is reported: %q", p.consoleErrors())

	// Another site's page, in the same browser.
	p.do("open the other site's page", chromedp.Navigate(fmt.Sprintf("http://%s:%s/", evilSite, evilPort)))
	p.waitText("the other site's page", "")
	// The fetch ends either way: the server refuses it (403), and the
	// browser, told by Cross-Origin-Resource-Policy that the answer is for
	// the live view's own origin, gives the other page a network error.
	deadline := time.Now().Add(waitTimeout)
	for p.evalString(`document.title`) == "evil" {
		require.False(t, time.Now().After(deadline), "the cross-site fetch finished")
		time.Sleep(50 * time.Millisecond)
	}
	assert.Eventually(t, func() bool {
		return slices.ContainsFunc(p.consoleErrors(), func(e string) bool {
			return strings.Contains(e, "X-Frame-Options") || strings.Contains(e, "frame-ancestors")
		})
	}, waitTimeout, 50*time.Millisecond, "the frame was refused: %q", p.consoleErrors())
	p.do("submit the other site's form", chromedp.Submit(chromedp.CSS("#f")))
	body := p.waitText("the live view's answer to the form", "refused")
	assert.Contains(t, body, "refused: a cross-origin request from http://"+evilSite+":"+evilPort)

	// A name that is not the live view's, resolving to it (DNS rebinding):
	// neither the page nor its data.
	for _, path := range []string{"", "api/state"} {
		p.do("open the live view by the rebound name", chromedp.Navigate(fmt.Sprintf("http://%s:%s/%s", evilSite, port, path)))
		body := p.waitText("the refusal of a foreign Host", "refused")
		assert.Contains(t, body, "refused: this live view serves 127.0.0.1:"+port, path)
		assert.NotContains(t, body, "embedded API server", "/%s leaks nothing", path)
	}

	// None of it ran a control: one pod, as before. The page's own button
	// (same-origin) still creates one.
	p.do("back to the live view", chromedp.Navigate(d.URL))
	p.waitFor("the live view again, nothing changed", func(s shown) bool {
		return s.Indexer == 1 && s.settled(3, s.HandleDeltas) && slices.Contains(s.Controls, "create-pod")
	})
	p.press("create-pod")
	p.waitFor("the page's own press created demo/live-1", func(s shown) bool {
		return s.Indexer == 2 && s.event("ADDED", "demo/live-1") != nil && strings.Contains(s.ControlResult, "created demo/live-1")
	})
	assert.Equal(t, 0, stopDemo(t, d), "trace-demo exits 0 on Ctrl-C")
}
