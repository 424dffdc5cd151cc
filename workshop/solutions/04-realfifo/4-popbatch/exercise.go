// Package popbatch is workshop exercise 04-realfifo/4-popbatch.
//
// # How many are popped together?
//
// Kind: predict. Minutes: 5. Needs: none. Practises: docs/04-deltafifo.md, "Batch pops".
//
// A fresh RealFIFO (AtomicEvents, EmitDeltaTypeBookmark, as chapter 5
// builds it) receives, namespace "default":
//
//	Replace([a, b], "5")  Add(c)  Add(d)  Update(c)  Add(e)  Bookmark("9")  Add(f)
//
// Then PopBatch is called until the queue is empty. Predict:
//
//   - Sizes: how many entries each PopBatch call takes;
//   - Initial: each call's isInInitialList.
package popbatch

// Your predictions.
var (
	Sizes = []int{
		1, // the ReplacedAll of the initial list: never batched
		2, // c, d: the run stops before the second c
		2, // c, e: and stops before the Bookmark
		1, // the Bookmark, alone
		1, // f
	}
	Initial = []bool{true, false, false, false, false}
)
