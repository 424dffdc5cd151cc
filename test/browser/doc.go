// Package browser opens the live view (`trace-demo --ui`, demo/liveview)
// in a real, headless Chromium driven over the DevTools protocol
// (github.com/chromedp/chromedp), and checks what a room would see: every
// stage drawn, the controls moving the counters, an event opening its
// waterfall, the reflector's stream, rewatch and relist, and its fallback
// to LIST on a server that cannot stream; on the embedded API server and
// on the real cluster of hack/local-cluster.sh. The live view a user's own
// process serves (dropin.LiveViewHandler): on the embedded API server, and
// as examples/controller-runtime serves it on that cluster (the test builds
// and runs the example): its informer and handlers, its priority queue, a
// reconcile's "why" and the plots; and at scale, that page and the demo's:
// an informer of 150,000 ConfigMaps with a burst of updates running
// (INFORMER_ANATOMY_BROWSER_OBJECTS for another size: hack/test.sh runs
// 30,000), the page's memory and the span store bounded. And what another site's
// page open in the same browser cannot do: press a control (a cross-site
// POST), frame the page, or read it by a name that resolves to it (DNS
// rebinding); and that the page runs under its content security policy.
//
// The tests are behind the "browser" build tag, so `go test ./...` needs no
// browser. hack/test.sh (the project's test command, and CI's) gets Chromium
// from hack/chromium.sh, exports its path as INFORMER_ANATOMY_CHROMIUM and
// runs them with the e2e cluster up. Without a Chromium they fail, they do
// not skip. By hand:
//
//	hack/local-cluster.sh up && eval "$(hack/local-cluster.sh env)"
//	export INFORMER_ANATOMY_CHROMIUM=$(hack/chromium.sh path)
//	go test -tags browser -v ./test/browser
//	hack/local-cluster.sh down
//
// Screenshots go to _output/screenshots/ (git-ignored; the test logs each
// path). `go test -tags browser ./test/browser -run Embedded -update-screenshot`
// also copies the live view's picture to docs/img/liveview.png.
package browser
