// Package hassynced is workshop exercise 04-deltafifo/4-hassynced.
//
// # HasSynced
//
// Kind: predict. Minutes: 5. Needs: none. Practises: docs/04-deltafifo.md, "HasSynced".
//
// A fresh DeltaFIFO gets Replace([a, b, c], "10"), then Add(d). Then the
// checker pops four times. Predict:
//
//   - SyncedAfterPops: after how many pops HasSynced first returns true
//     (0 if already before the first);
//   - Initial: the isInInitialList flag each of the four pops receives.
package hassynced

// Your predictions.
var (
	SyncedAfterPops = -1
	Initial         []bool
)
