// Package backlog is workshop exercise 08-liveview/1-backlog.
//
// # Where a burst waits
//
// Kind: predict. Minutes: 10. Needs: browser. Practises: docs/tracing.md, "Live view".
//
// Start the live view and open the URL it prints in a browser:
//
//	go run ./cmd/trace-demo --ui
//
// The page draws the informer at work: the reflector, the queue (a
// RealFIFO), HandleDeltas, the indexer, and a row per listener: addCh,
// pending (the listener's ring buffer), nextCh, handler. Of its three
// handlers, demo.auditHandler#0 and demo.metricsHandler#1 return at once;
// *demo.tunableHandler#2 is the one the buttons make slow or fast.
//
// Predict first, then look, on a fresh run (restart the demo if you have
// pressed buttons already): press "make the handler slow" (10 ms per call
// from then on), then "burst of N updates" with N = 200 (200 updates of one
// pod, written one after another).
//
//   - Box: at the moment the two fast handlers have made their 200 calls,
//     which box holds most of the updates *demo.tunableHandler#2 has not
//     handled yet? One of "queue", "addCh", "pending".
//   - Listener: the row that box is in, as the page names it ("" for the
//     queue, which is no listener's).
//   - Calls: how many calls each handler has made for the burst once all
//     has drained, in the page's order (audit, metrics, tunable).
//
// The checker starts the same demo, presses the same two buttons through
// the page's HTTP API (the calls the page makes), and reads the same
// numbers at that moment; it needs no browser, you do.
package backlog

// Your predictions.
var (
	Box      = ""
	Listener = ""
	Calls    = [3]int{}
)
