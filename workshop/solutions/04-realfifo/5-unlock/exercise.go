// Package unlock is workshop exercise 04-realfifo/5-unlock.
//
// # The watch keeps queueing
//
// Kind: predict. Minutes: 10. Needs: none. Practises: docs/04-deltafifo.md, "Unlock while processing".
//
// A handler is slow. While the informer processes one entry, the
// reflector keeps receiving watch events and calls Add. Does Add wait for
// the handler? The checker builds RealFIFOs with AtomicEvents, queues
// entries, Pops one with a process function that blocks, and meanwhile
// calls Add from another goroutine. Predict:
//
//   - WithUnlock: with UnlockWhileProcessing (chapter 5's setting), one
//     entry queued and popped: while the process function blocks, does
//     the Add return at once ("returns") or wait for it ("waits")?
//   - WithoutUnlock: the same without UnlockWhileProcessing ("returns"
//     or "waits")?
//   - KeepsLockFrom: with UnlockWhileProcessing, the smallest number of
//     entries still queued (after the Pop took its one) at which the Pop
//     keeps the lock anyway, so that Add waits. Find the line of
//     RealFIFO.whileProcessing_locked that decides.
//
// What would waiting do to a reflector's watch (kubernetes/kubernetes
// #103789), and what would never waiting do to memory?
package unlock

// Your predictions.
var (
	WithUnlock    = "returns" // the lock is released around the process call
	WithoutUnlock = "waits"   // the lock is held while the process function runs
	KeepsLockFrom = 2000      // two batches' worth: a consumer that far behind slows the producer down
)
