// Package rewatch is workshop exercise 08-liveview/2-rewatch-or-relist.
//
// # Drop the watch, or force a 410
//
// Kind: predict. Minutes: 10. Needs: browser. Practises: docs/tracing.md, "Live view".
//
// Start the live view and open the URL it prints in a browser:
//
//	go run ./cmd/trace-demo --ui
//
// Press "create a pod" (so that the open watch delivers an event) and note
// the resourceVersion in the reflector box: call it S. Then press "drop the
// watch" (the API server ends every watch). Press "create a pod" again,
// note the new S, and press "compact + force a 410 relist" (a write the pod
// watch does not see, then compaction of the history up to it, then every
// watch ended).
//
// For each of the two presses, predict the requests the reflector sends
// next, in order, until it is watching again. Write each request as
// "VERB FROM", VERB being STREAM (a WATCH with sendInitialEvents=true: the
// whole state, then a bookmark, then the changes on the same connection),
// LIST or WATCH (a plain watch), and FROM the resourceVersion it asks for,
// one of:
//
//	S      the resourceVersion the box showed before the press
//	later  a resourceVersion newer than S (the word "later", as in
//	       the exercises of chapter 3)
//	0      "0": any version the server has
//	""     "": the latest state
//
// and add " 410" to a request answered with 410 Expired (for a WATCH: its
// ERROR event). For example, the informer's very first request was
// `STREAM ""`: the whole state streamed, then a bookmark, and the same
// connection went on as its watch.
//
// Check your prediction on the page: the box's STREAM, LIST and WATCH
// counters, and under them the reflector's last five requests, oldest
// first ("WATCH from 7 · ERROR Expired" is a WATCH from 7 ended by 410
// Expired; the data endpoint, GET /api/state, has the last eight in
// pipeline.reflector.requests). The checker presses the same buttons
// through the page's HTTP API and reads the same request log.
package rewatch

// Your predictions.
var (
	AfterDropWatch []string
	AfterRelist    []string
)
