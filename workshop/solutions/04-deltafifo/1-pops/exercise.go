// Package pops is workshop exercise 04-deltafifo/1-pops.
//
// # Predict, then pop (DeltaFIFO)
//
// Kind: predict. Minutes: 10. Needs: none. Practises: docs/04-deltafifo.md, "Worked examples: these calls → these Deltas popped".
//
// On an empty DeltaFIFO (no knownObjects), namespace "default", name@RV:
//
//	Add(a@1) Add(b@2) Update(a@3) Delete(b@4) Delete(b@5) Update(a@6)
//
// Predict what popping until the queue is empty hands out, one string per
// Pop, in the form kit.DescribeDeltas prints: "default/a: Added@1
// Updated@3", that is the key, then each delta's type @ the object's
// resourceVersion. The checker runs the calls on chapter 4's DeltaFIFO and
// on client-go's, and both must pop exactly your strings.
//
// Look closely at the two Deletes of b: which one survives, and why?
package pops

// Pops is your prediction.
var Pops = []string{
	"default/a: Added@1 Updated@3 Updated@6", // one entry per key, in first-queued order; updates are never merged
	"default/b: Added@2 Deleted@4",           // two Deleteds in a row collapse; the older one stays (it is not a tombstone)
}
