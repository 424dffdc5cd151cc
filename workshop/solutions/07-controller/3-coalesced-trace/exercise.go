// Package coalescedtrace is workshop exercise 07-controller/3-coalesced-trace.
//
// # Read a coalesced workqueue trace
//
// Kind: investigate. Minutes: 15. Needs: none. Practises: docs/tracing.md, "After the handler: the workqueue and the reconcile".
//
// The burst of 07-controller/2: a pod created, then updated ten times while
// its first reconcile (half a second) runs, on package dropin's informer
// and a traced workqueue: ctrlkit.Burst(t, spans) runs it, in a test of your
// own, with spans := kit.NewSpans(). Read the spans of the second
// reconcile, the one that served the ten updates:
//
//   - Links: how many links its workqueue.process span has;
//   - Chain: the names of the spans from that workqueue.process up to
//     the handler call its key was first added in, parent by parent,
//     starting with "workqueue.process";
//   - MergedEnd: the name of the last span (the one with no children) in
//     the trace of an update whose add was merged.
//
// Where would you look to see why this reconcile ran, and for which events?
package coalescedtrace

// Your findings.
var (
	Links     = 9
	Chain     = []string{"workqueue.process", "workqueue.queued", "workqueue.add", "OnUpdate"}
	MergedEnd = "workqueue.add"
)
