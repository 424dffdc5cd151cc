// Package inplace is workshop exercise 01-store/3-inplace.
//
// # Break the invariant
//
// Kind: predict. Minutes: 10. Needs: none. Practises: docs/01-store.md, "Indexes and their invariant".
//
// A store indexed by node holds pod p on node n1. Three ways to move it to
// n2; for each, predict how many pods ByIndex("byNode", "n1") and
// ByIndex("byNode", "n2") return afterwards. Each starts from a fresh
// store holding p on n1.
//
//  1. InPlace: get p from the store and set p.Spec.NodeName = "n2" on the
//     object you got, nothing else.
//  2. InPlaceThenUpdate: the same, then call Update with that changed
//     object, as if to tell the store.
//  3. CopyThenUpdate: DeepCopy the pod you got, change the copy, Update
//     with the copy.
//
// Then read the checker's result next to the storeIndex invariant in
// docs/01-store.md: the index is only correct if the stored object is never
// changed behind the store's back, because the store computes the values to
// remove from the object it holds.
package inplace

// Counts is how many pods ByIndex returns for each node.
type Counts struct{ OnN1, OnN2 int }

// Your predictions.
var (
	InPlace           = Counts{OnN1: 1, OnN2: 0}
	InPlaceThenUpdate = Counts{OnN1: 1, OnN2: 0}
	CopyThenUpdate    = Counts{OnN1: 0, OnN2: 1}
)
