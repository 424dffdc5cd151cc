// Package owners is workshop exercise 02-lister/3-owners.
//
// # Owners by selector
//
// Kind: predict. Minutes: 5. Needs: none. Practises: docs/02-lister.md, "One generic lister, many names".
//
// Namespace "shop" holds three ReplicaSets: "web" selecting app=web,
// "everything" with an empty selector {}, and "nothing" with no selector
// at all (nil). Namespace "other" holds "web-too", selecting app=web. Pods
// "shop/web-1" and "other/web-2" are labelled app=web. Predict the names
// GetPodReplicaSets returns for each of them (sorted), and whether it
// returns an error for a pod in "shop" labelled app=db.
//
// Then think: what would happen in a real cluster if an empty selector
// matched every pod?
package owners

// Your predictions.
var (
	Owners        = []string{"web"}     // for shop/web-1
	OwnersInOther = []string{"web-too"} // for other/web-2
	ErrorForApp   = true
)
