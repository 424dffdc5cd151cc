// Package onetraced is workshop exercise 08-liveview/4-one-traced.
//
// # Trace one object, count them all
//
// Kind: predict. Minutes: 10. Needs: browser. Practises: docs/tracing.md, "Live view".
//
// On a big cluster you trace the few objects you care about
// (docs/tracing.md, "Tracing a few objects on a big cluster"). Start the
// live view tracing one pod only, and open the URL it prints:
//
//	go run ./cmd/trace-demo --ui --trace-keys demo/web-1
//
// Note the HandleDeltas box and the event list, then press "burst of N
// updates" with N = 50 (50 updates of demo/web-1) and "create a pod" (it
// creates demo/live-1). Predict:
//
//   - WebRows: how many new rows of demo/web-1 the event list gets;
//   - LiveRows: how many rows of demo/live-1 it gets;
//   - HandleDeltas: by how much the HandleDeltas box moves;
//   - Calls: by how much each handler's call count moves (all three move
//     alike).
//
// The checker starts the same demo with the same flag, presses the same
// buttons through the page's HTTP API, and reads the same numbers.
package onetraced

// Your predictions.
var (
	WebRows  = 50 // one trace per update of the traced key: nothing merged on the RealFIFO
	LiveRows = 0  // not a traced key: no spans, so no row
	// The boxes are the informer's own counters: they count every
	// change, traced or not.
	HandleDeltas = 51
	Calls        = 51
)
