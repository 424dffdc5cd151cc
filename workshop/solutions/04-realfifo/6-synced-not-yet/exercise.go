// Package syncednotyet is workshop exercise 04-realfifo/6-synced-not-yet.
//
// # Synced, but not yet
//
// Kind: predict. Minutes: 10. Needs: none. Practises: docs/04-deltafifo.md, "`HasSynced` and `isInInitialList`".
//
// A queue gets Replace([a, b], "5") and is popped until the initial list
// is through. While the process function handles the last entry of the
// initial list, someone asks the queue's HasSynced from another goroutine
// (a controller's WaitForCacheSync). Predict what they get and when,
// written "VALUE WHEN": VALUE is what HasSynced returned, true or false,
// and WHEN is "at once" (while the process function is still running) or
// "after the process call" (the call waited for it to return). E.g.
// "false after the process call". Predict:
//
//   - RealDuring: on a RealFIFO as chapter 5 builds it (AtomicEvents,
//     UnlockWhileProcessing);
//   - RealAfter: the same queue, asked again from the process function's
//     goroutine once that Pop has returned (WHEN: "at once" if it did not
//     wait);
//   - DeltaDuring: on a DeltaFIFO.
//
// Why is the RealFIFO's answer the one a controller waiting for HasSynced
// needs?
package syncednotyet

var (
	RealDuring  = "false at once"               // the lock is free while processing; the count drops only after the process call
	RealAfter   = "true at once"                // the Pop has returned: the count is down, nothing holds the lock
	DeltaDuring = "true after the process call" // the DeltaFIFO processes under its lock: the call waits, then sees the count already down
)
