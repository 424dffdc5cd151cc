// Package relistcopies is workshop exercise 09-scale/1-relist-copies.
//
// # What a relist holds
//
// Kind: predict. Minutes: 10. Needs: none. Practises: docs/scale.md, "What a relist costs".
//
// Two informers watch the same 1,000 pods of namespace default on the
// embedded API server: client-go v0.37.2's (cache.NewSharedIndexInformer)
// and ours (chapter 5's, on the RealFIFO), each with one handler. Both
// have synced: each cache holds the 1,000 pods.
//
// Then the API server goes down. While it is down, 100 of the pods change
// (a label: each gets a new resourceVersion), 50 others are deleted and 20
// new pods are created; the server's history is compacted. When it comes
// back, each reflector's rewatch gets 410 Expired and it fetches the whole
// state again, as a stream (a relist).
//
// Predict, for each informer's handler, what the relist brings, and how
// many pods each informer holds at its peak:
//
//   - UpdateCalls: the relist's OnUpdate calls one handler gets (the same
//     number for both informers);
//   - SamePointerOurs: of our handler's relist OnUpdate calls, how many get
//     old and new as one pointer (old == new);
//   - HeldClientGo, HeldOurs: how many distinct pod objects each informer
//     holds at the moment the relist's whole state has arrived and its
//     Replace is next (the cache's and the reflector's together; a pod
//     object held by both counts once).
//
// At about 11 KiB a pod in memory (the scale lesson's pod), what does
// each informer's heap peak at, against its steady 1,000 pods? And why
// would stripping managedFields not change the ratio?
package relistcopies

// Your predictions.
var (
	UpdateCalls     = 0
	SamePointerOurs = 0
	HeldClientGo    = 0
	HeldOurs        = 0
)
