// Package firstwins is workshop exercise 06-factory/1-first-wins.
//
// # First wins
//
// Kind: predict. Minutes: 5. Needs: none. Practises: docs/06-factory.md, "Rules, each with a test in factory_test.go".
//
// Two fresh factories over the embedded API server. In each, two callers
// ask for a pod informer:
//
//   - A: first f.InformerFor(&corev1.Pod{}, mine), then
//     f.Core().V1().Pods().Informer();
//   - B: first f.Core().V1().Pods().Informer(), then
//     f.InformerFor(&corev1.Pod{}, mine).
//
// mine is a NewInformerFunc that builds a pod informer with one index,
// "byNode". Predict, for each, the names of the indexes of the informer
// the second caller gets (its GetIndexer().GetIndexers(), sorted): that
// is, whose constructor made it, and what that constructor puts in.
//
// Which SharedIndexInformerOptions can you no longer choose once the
// typed accessor has made the informer?
package firstwins

var (
	A = []string{"byNode"}    // mine asked first: its informer, for both callers
	B = []string{"namespace"} // the typed accessor asked first: the factory's constructor, with its namespace index
)
