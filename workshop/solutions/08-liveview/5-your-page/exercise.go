// Package yourpage is workshop exercise 08-liveview/5-your-page.
//
// # Your own controller's page
//
// Kind: investigate. Minutes: 15. Needs: browser. Practises: docs/07-your-controller.md, "Live view in your process".
//
// The live view is not only the demo's: package dropin serves the page of
// any process that runs its informers and traced queues. The kit has a
// controller for you (ctrlkit.NewYourPage): a client-go style controller on
// package dropin's informer of pods, with three event handlers and a
// traced workqueue with one worker. Give it its page, in your own
// process:
//
//   - Mount: serve the live view of this process on mux at
//     /debug/informers/;
//   - SpanProcessors: what the kit is to give the controller's tracer
//     provider so that the page can say why each reconcile ran (without
//     it the page shows the counters only).
//
// Then run your process:
//
//	go run ./workshop/exercises/08-liveview/5-your-page/serve
//
// It starts the controller (the pods default/cart-0, cart-1 and cart-2
// exist from the start), serves your mux on a loopback port and prints
// the page's address. Open the page, and press Enter: it plays a
// scenario, which you can watch: cart-1 is updated once, the reconcile
// that update causes is held while cart-1 is updated seven times more,
// and is let go a few seconds later. It keeps serving until Ctrl-C. Read
// off the page:
//
//   - Queue: the traced queue's name;
//   - Slow: the handler whose calls take longest, by its name as the page
//     writes it;
//   - Reconciles: how many reconciles of default/cart-1 the page lists;
//   - Absorbed: how many adds the newest reconcile of default/cart-1
//     absorbed (its links).
//
// The checker runs the same controller and scenario with your Mount and
// SpanProcessors, reads the page through your mux, and compares.
package yourpage

import (
	"net/http"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/informer-anatomy/informer-anatomy/dropin"
)

// Mount serves the live view of this process on mux at /debug/informers/.
func Mount(mux *http.ServeMux) {
	mux.Handle("/debug/informers/", dropin.LiveViewHandler())
}

// SpanProcessors are the span processors the kit gives the controller's
// tracer provider.
func SpanProcessors() []sdktrace.SpanProcessor {
	// The page's span store: the event list, "Why did this run" and the
	// waterfalls are read from it. A real controller gives it beside its
	// exporter.
	return []sdktrace.SpanProcessor{dropin.LiveViewSpanProcessor()}
}

// What you read off the page.
var (
	// The queues table's first column: the name of the controller's
	// traced queue (config.Name in dropin.NewTracedRateLimitingQueueWithConfig).
	Queue = "cart-reaper"
	// The handlers table: the one with the longest mean call (20 ms, an
	// imagined price service called from the handler), named by its type
	// and its place among the informer's handlers, from #0.
	Slow = "github.com/informer-anatomy/informer-anatomy/workshop/kit/ctrlkit.PriceAuditor#1"
	// "Why did this run": its first reconcile (the initial list), the
	// held one (the first update), and one more for the seven updates
	// that came while the held one ran.
	Reconciles = 3
	// The first of the seven found the key processing and not waiting:
	// it made it wait again, and is the newest reconcile's own trace (its
	// parent chain, not a link). The other six found it waiting and were
	// merged into that wait: six links.
	Absorbed = 6
)
