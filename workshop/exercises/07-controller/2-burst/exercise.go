// Package burst is workshop exercise 07-controller/2-burst.
//
// # How many reconciles does a burst make?
//
// Kind: predict. Minutes: 10. Needs: none. Practises: docs/07-your-controller.md, "The trace goes on to your reconcile".
//
// A controller in the client-go style (ctrlkit.NewController: a handler that
// puts each pod's key on a workqueue, one worker whose reconcile takes
// half a second) runs on package dropin's informer. A pod is created; as
// soon as the worker has begun reconciling it, the pod is updated ten
// times in quick succession (all ten within a few milliseconds, long before
// that first reconcile ends). Then nothing more happens.
//
// Predict, before running anything:
//
//   - Reconciles: how many reconciles of the pod's key the worker makes in
//     all, counting the first;
//   - Merged: how many of the eleven Adds (one for the create, ten for the
//     updates) the workqueue merges into a key that was already waiting
//     (the traced queue's Stats().Merged, the workqueue.add spans with
//     workqueue.coalesced = true).
//
// What does the workqueue promise about a key that changes while it is
// being reconciled?
package burst

// Your predictions.
var (
	Reconciles = 0
	Merged     = -1
)
