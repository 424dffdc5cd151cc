// Package bookmarks is workshop exercise 03-reflector/4-bookmarks.
//
// # Quiet resources and bookmarks
//
// Kind: predict. Minutes: 10. Needs: none. Practises: docs/03-reflector.md, "resourceVersion rules".
//
// A reflector watches pods. Nothing happens to pods, but ConfigMaps change
// a lot: the server's resourceVersion races ahead while the pod watch sees
// no event. Exercise 1-requests showed what happens when the server then
// compacts its history and closes every watch. This time the server sends
// a bookmark first. The checker, in a testing/synctest bubble (fake time),
// with client-go v0.37.2's defaults:
//
//  1. creates two pods and starts the reflector; waits until it watches;
//  2. waits 5 seconds (so the watch is not "very short");
//  3. creates three ConfigMaps, then SendBookmarks() (every watch that
//     allows bookmarks receives one, at the server's current
//     resourceVersion), then Compact() and CloseWatches();
//  4. waits 30 seconds and lists every pod request the server received.
//
// Predict that list, WithBookmark, written as in 1-requests: one string
// per request, "watch rv=X stream", "watch rv=X" or "list rv=X limit=N"
// (no " limit=N" when the request had none), with X as it was sent (""
// is written rv=), S for the resourceVersion the initial state is at, B
// for the one the bookmark carried, and the word "later" for any other
// (rv=later).
//
// Then answer for yourself: why do real API servers send bookmarks about
// once a minute?
package bookmarks

// WithBookmark is your prediction.
var WithBookmark []string
