// Package fallback is workshop exercise 03-reflector/6-fallback.
//
// # A server that cannot stream
//
// Kind: predict. Minutes: 10. Needs: none. Practises: docs/03-reflector.md, "The stream".
//
// Two reflectors with client-go v0.37.2's defaults (the WatchListClient
// gate on: they stream the initial state), each filling a chapter-1 store
// with the two pods of its own embedded API server, in a testing/synctest
// bubble (fake time). Predict the pod requests each server receives, in
// 1-requests' notation: "watch rv=X stream" (a WATCH with
// sendInitialEvents=true), "watch rv=X" (a plain WATCH), "list rv=X
// limit=N" (no " limit=N" when the request had none), followed by
// " refused=422" when the server refused it. X is as sent ("" is written
// rv=), or S for the resourceVersion of the pods' initial state, or the
// word "later" for any newer one (rv=later; as in 1-requests).
//
//   - Refused: the server cannot stream, as a kube-apiserver whose
//     WatchList feature is off (apiserver.Options{DisableWatchList: true}):
//     it answers a stream with 422 Invalid. The checker starts the
//     reflector, waits until it watches, waits 5 seconds, then forces a
//     relist as in 1-requests (a ConfigMap write, Compact(),
//     CloseWatches()) and waits 30 seconds.
//   - OptOut: the server streams, but the reflector's ListerWatcher says
//     it cannot (reflector.ToListWatcherWithWatchListSemantics with a
//     client whose IsWatchListSemanticsUnSupported() returns true, as
//     client-go's fake clientset does). The checker starts the reflector,
//     waits until it watches, and waits 5 seconds.
//
// Then answer for yourself: after the server refused once, why does the
// reflector try to stream again, and what would a kube-apiserver's log
// show for an informer of a cluster whose WatchList feature is off?
package fallback

// Your predictions.
var (
	// The server refuses the stream (422): the reflector falls back, in
	// the same cycle, to the classic conversation, LIST at "0" (paged by
	// 500, the first LIST) then WATCH from its resourceVersion. The
	// relist: the plain rewatch from S gets 410 Expired, and the next
	// cycle tries to stream again (the reflector decided to stream when it
	// was built and does not remember the refusal), is refused, and LISTs
	// at its last synced resourceVersion (unpaged: a specific RV is served
	// from the watch cache), then watches from the list's.
	Refused = []string{
		"watch rv= stream refused=422",
		"list rv=0 limit=500",
		"watch rv=S",
		"watch rv=S",
		"watch rv=S stream refused=422",
		"list rv=S",
		"watch rv=later",
	}
	// The ListerWatcher opts out: the reflector, asking it when built,
	// never streams; the classic conversation, with no refused request.
	OptOut = []string{"list rv=0 limit=500", "watch rv=S"}
)
