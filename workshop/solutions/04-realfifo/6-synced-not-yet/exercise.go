// Package syncednotyet is workshop exercise 04-realfifo/6-synced-not-yet.
//
// # Synced, but not yet
//
// Kind: predict. Minutes: 10. Needs: none. Practises: docs/04-deltafifo.md, "`HasSynced` and `isInInitialList`".
//
// A queue gets Replace([a, b], "5") and is popped until the initial list
// is through. While the process function handles the last entry of the
// initial list, someone asks the queue's HasSynced (a controller's
// WaitForCacheSync, from another goroutine). Predict what they get:
//
//   - RealDuring: on a RealFIFO as chapter 5 builds it (AtomicEvents,
//     UnlockWhileProcessing): "true", "false", or "blocks" (the call
//     does not return until the process function has);
//   - RealAfter: the same queue, once that Pop has returned;
//   - DeltaDuring: on a DeltaFIFO.
//
// Why is the RealFIFO's answer the one a controller waiting for HasSynced
// needs?
package syncednotyet

// Your predictions: "true", "false" or "blocks".
var RealDuring, RealAfter, DeltaDuring = "false", "true", "blocks"

// RealDuring: the count drops only when the process call returns, and the
// lock is free meanwhile. DeltaDuring: the DeltaFIFO processes under its
// lock, so HasSynced waits for the process function.
