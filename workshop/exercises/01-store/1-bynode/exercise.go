// Package bynode is workshop exercise 01-store/1-bynode.
//
// # An index by node
//
// Kind: build. Minutes: 10. Needs: none. Practises: docs/01-store.md, "Indexes and their invariant".
//
// A controller that drains a node asks "every pod on node X" many times a
// second; scanning the whole cache each time is what indexes avoid. Write
// ByNode, an index function (chapter 1's store.IndexFunc) that files a pod
// under its spec.nodeName.
//
// A pod not yet scheduled (nodeName "") must not be filed under "": return
// no values for it, or the question "which pods are on node empty" lists every
// pending pod, which nobody asked for. Anything that is not a pod is an
// error that names the type it got.
//
// The checker fills chapter 1's indexer and client-go's with the same pods,
// moves one to another node with Update, and requires IndexKeys and
// ListIndexFuncValues to answer the same, and right, in both: the moved
// pod leaves the old node's set, and a node with no pods left disappears
// from the index (updateSingleIndex_locked deletes an empty set).
package bynode

// ByNode returns the pod's node name as its one index value, or no values
// for an unscheduled pod.
func ByNode(obj any) ([]string, error) {
	return nil, nil
}
