// Package replace is workshop exercise 01-store/4-replace.
//
// # Replace
//
// Kind: predict. Minutes: 5. Needs: none. Practises: docs/01-store.md, "The store's resourceVersion".
//
// A store holds a@1, b@2 and c@3 (name@resourceVersion, namespace
// "default"). Then Replace([b@4, d@5], "10"). Predict:
//
//   - Keys: what ListKeys returns, sorted;
//   - RVOfB: the resourceVersion of the b that Get returns;
//   - LastSync: what LastStoreSyncResourceVersion returns.
//
// Then think ahead to chapter 3: a reflector calls Replace after every
// LIST. What would go wrong if it called Add for each listed item instead?
package replace

// Your predictions.
var (
	Keys     = []string{"default/b", "default/d"}
	RVOfB    = "4"
	LastSync = "10"
)
