// Package relistorrewatch is workshop exercise 03-reflector/2-relist-or-rewatch.
//
// # Relist or re-watch?
//
// Kind: predict. Minutes: 15. Needs: none. Practises: docs/03-reflector.md, "Every failure mode".
//
// A reflector watches pods on the embedded API server. For each fault
// below, predict the pod requests it sends after its first one (the
// stream that fetched the initial state), as kit.Requests writes them:
// "watch rv=X stream" (a WATCH with sendInitialEvents=true, which fetches
// the whole state: a relist, with client-go v0.37.2's defaults), "watch
// rv=X" (a plain WATCH from X) or "list rv=X limit=N", with " fault=N"
// added when the server answered with an injected error. Write X as S for
// the resourceVersion the initial state is at, and as the word "later"
// for any newer one (rv=later; as in 1-requests).
// Each runs in its own testing/synctest bubble: start, wait until
// watching, wait 5 seconds (except QuickClose), fault, wait 30 seconds,
// list the requests.
//
//   - Close: CloseWatches() (a watch timeout or an apiserver rollout).
//   - QuickClose: CloseWatches() only 100 ms after the watch started.
//   - Refused: Stop() the server, wait 1 s, Restart() it (nothing written;
//     this one runs in real time, for the reason given in the checker;
//     requests refused while it was down never reach it).
//   - Expired: create a ConfigMap, Compact(), CloseWatches().
//   - TooMany: the next watch request gets 429; then CloseWatches().
//   - Forbidden: the next watch request gets 403; then CloseWatches().
//
// Which of them relist, and which only watch again? Be careful with
// QuickClose: it is the trap of the old prose exercises, where a relist
// "caused by a 410" really came from this rule.
package relistorrewatch

// Requests holds, for each fault, the pod requests after the first.
type Requests struct {
	Close, QuickClose, Refused, Expired, TooMany, Forbidden []string
}

// Prediction is your answer.
var Prediction = Requests{}
