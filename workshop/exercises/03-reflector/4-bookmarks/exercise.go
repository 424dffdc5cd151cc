// Package bookmarks is workshop exercise 03-reflector/4-bookmarks.
//
// # Quiet resources and bookmarks
//
// Kind: predict. Minutes: 10. Needs: none. Practises: docs/03-reflector.md, "resourceVersion rules".
//
// A reflector watches pods. Nothing happens to pods, but ConfigMaps change
// a lot: the server's resourceVersion races ahead while the pod watch sees
// no event, so the reflector's resourceVersion stays where its initial
// state left it (the stream's bookmark). Then the server compacts its
// history and every watch is closed.
//
// Predict, for each case, whether the reflector has to relist, that is
// fetch the whole state again (with client-go v0.37.2's defaults: a new
// stream, a WATCH with sendInitialEvents=true):
//
//   - WithoutBookmark: 3 ConfigMap writes, Compact(), CloseWatches().
//   - WithBookmark: 3 ConfigMap writes, SendBookmarks() (every watch that
//     allows bookmarks receives one at the current resourceVersion),
//     Compact(), CloseWatches().
//
// Then answer for yourself: why do real API servers send bookmarks about
// once a minute?
package bookmarks

// Your predictions.
var (
	RelistWithoutBookmark = false
	RelistWithBookmark    = false
)
