// Package lateroot is workshop exercise 08-liveview/3-late-root.
//
// # Click an event of a handler added late
//
// Kind: predict. Minutes: 10. Needs: browser. Practises: docs/tracing.md, "Live view".
//
// Start the live view and open the URL it prints in a browser:
//
//	go run ./cmd/trace-demo --ui
//
// On a fresh run (restart the demo if you have pressed buttons already)
// the informer has listed demo/web-1. Press "create a pod" twice: three
// pods are cached (the Indexer box says 3). Note the HandleDeltas box, then
// press "add a handler": a fourth listener row appears, the added
// handler's, which the page names *demo.extraHandler#3, and new rows in the
// event list. Predict, then click one of the new rows to open its
// waterfall:
//
//   - Rows: how many new rows "add a handler" puts in the event list;
//   - Root: the name of the root span of their traces (the waterfall's
//     first line);
//   - Listeners: the listeners whose handler call is in one such trace,
//     named as the page names them (a listener row's name);
//   - HandleDeltas: by how much the HandleDeltas box moves.
//
// The checker starts the same demo, presses the same buttons through the
// page's HTTP API, and reads the same event list and waterfalls.
package lateroot

// Your predictions.
var (
	Rows         = 0
	Root         = ""
	Listeners    []string
	HandleDeltas = -1
)
