// Package tombstone is workshop exercise 04-deltafifo/3-tombstone.
//
// # Make a tombstone
//
// Kind: predict. Minutes: 10. Needs: none. Practises: docs/04-deltafifo.md, "Tombstones: why handlers must expect DeletedFinalStateUnknown".
//
// The informer's cache (the DeltaFIFO's knownObjects) holds x@5, a pod
// named x in namespace default. The reflector relists, and the new LIST
// lacks x: Replace([], "20").
//
//   - Plain: predict the one pop, in kit.DescribeDeltas form (a tombstone
//     shows as "Deleted@tombstone(RV)" with the resourceVersion of the
//     state it carries).
//   - AfterUpdate: the same, but an Update(x@9) is still queued, not yet
//     popped, when Replace comes. Predict the one pop.
//
// Which state does the tombstone carry in the second case, and why is it
// the better one for a handler?
package tombstone

// Your predictions.
var (
	Plain       = ""
	AfterUpdate = ""
)
