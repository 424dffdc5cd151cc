// Package relistorrewatch is workshop exercise 03-reflector/2-relist-or-rewatch.
//
// # Relist or re-watch?
//
// Kind: predict. Minutes: 15. Needs: none. Practises: docs/03-reflector.md, "Every failure mode".
//
// A reflector watches pods on the embedded API server. For each fault
// below, predict whether it makes the reflector relist, that is fetch the
// whole state again (true: with client-go v0.37.2's defaults a new stream,
// a WATCH with sendInitialEvents=true; a LIST where the server cannot
// stream), or only WATCH again from the same resourceVersion (false). Each
// runs in its own testing/synctest bubble: start, wait until watching,
// wait 5 seconds (except QuickClose), fault, wait 30 seconds, count the
// requests that fetched the whole state (streams and LISTs).
//
//   - Close: CloseWatches() (a watch timeout or an apiserver rollout).
//   - QuickClose: CloseWatches() only 100 ms after the watch started.
//   - Refused: Stop() the server, wait 1 s, Restart() it (nothing written;
//     this one runs in real time, for the reason given in the checker).
//   - Expired: create a ConfigMap, Compact(), CloseWatches().
//   - TooMany: the next watch request gets 429; then CloseWatches().
//   - Forbidden: the next watch request gets 403; then CloseWatches().
//
// Be careful with QuickClose: it is the trap of the old prose exercises,
// where a relist "caused by a 410" really came from this rule.
package relistorrewatch

// Relists says, per fault, whether the reflector lists again.
type Relists struct {
	Close, QuickClose, Refused, Expired, TooMany, Forbidden bool
}

// Prediction is your answer.
var Prediction = Relists{}
