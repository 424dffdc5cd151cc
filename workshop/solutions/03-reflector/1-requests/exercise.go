// Package requests is workshop exercise 03-reflector/1-requests.
//
// # Read the request log
//
// Kind: predict. Minutes: 10. Needs: none. Practises: docs/03-reflector.md, "resourceVersion rules".
//
// A reflector fills a chapter-1 store with the pods of the embedded API
// server. The checker, in a testing/synctest bubble (fake time):
//
//  1. creates two pods and starts the reflector; waits until it watches;
//  2. waits 5 seconds (so the watch is not "very short");
//  3. creates a ConfigMap (the server's resourceVersion moves on, the pod
//     watch sees nothing), then Compact() and CloseWatches();
//  4. waits 30 seconds and lists every pod request the server received.
//
// Predict that list, one string per request: "list rv=X limit=N" (no
// " limit=N" when the request had none) or "watch rv=X". Write X as 0 for
// "0", S for the resourceVersion of the first LIST's result, and later for
// any newer one. Explain each with the table in docs/03-reflector.md: why
// "0" first, why the relist asks for S and not "", why only the first LIST
// is paged.
package requests

// Requests is your prediction.
var Requests = []string{
	"list rv=0 limit=500", // first LIST: "0", any recent state, from the watch cache, paged
	"watch rv=S",          // continue where the list left off
	"watch rv=S",          // CloseWatches: watch again from the same RV (no relist for a normal close)
	"list rv=S",           // that watch got an ERROR 410 (S was compacted): relist at the last synced RV, unpaged
	"watch rv=later",      // and watch from the relist's RV
}
