// Package requests is workshop exercise 03-reflector/1-requests.
//
// # Read the request log
//
// Kind: predict. Minutes: 10. Needs: none. Practises: docs/03-reflector.md, "resourceVersion rules".
//
// A reflector fills a chapter-1 store with the pods of the embedded API
// server, with client-go v0.37.2's defaults. The checker, in a
// testing/synctest bubble (fake time):
//
//  1. creates two pods and starts the reflector; waits until it watches;
//  2. waits 5 seconds (so the watch is not "very short");
//  3. creates a ConfigMap (the server's resourceVersion moves on, the pod
//     watch sees nothing), then Compact() and CloseWatches();
//  4. waits 30 seconds and lists every pod request the server received.
//
// Predict that list, one string per request: "watch rv=X stream" (a
// WATCH that asks for the initial state: sendInitialEvents=true,
// resourceVersionMatch=NotOlderThan, bookmarks), "watch rv=X" (a plain
// WATCH) or "list rv=X limit=N" (no " limit=N" when the request had none).
// Write X as it was sent ("" is written rv=), or as S for the
// resourceVersion the initial state is at (the stream's bookmark says it),
// or as the word "later" for any newer one: rv=later. S and "later" are
// names, written in place of a number that changes from run to run; the
// exercises of chapters 3 and 4 use them alike. Explain each with the table in
// docs/03-reflector.md: why the first request asks for "", why the second
// asks for S, and what the reflector sends after the 410.
package requests

// Requests is your prediction.
var Requests []string
