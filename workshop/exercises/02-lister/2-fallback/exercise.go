// Package fallback is workshop exercise 02-lister/2-fallback.
//
// # The fallback: same answer, different cost
//
// Kind: investigate. Minutes: 10. Needs: none. Practises: docs/02-lister.md, "The two list functions".
//
// The checker fills two indexers with the same 1,000 pods, 100 in each of
// 10 namespaces: one with chapter 1's namespace index, one without. It then
// calls chapter 2's ListAllByNamespace(indexer, "ns-3", app=web, ...) on
// both, through a wrapper that counts how many objects the indexer hands
// out (from List or Index) and how many times the selector's Matches runs.
// Find out (read listers.go, or measure with your own wrapper) and write
// the four numbers down. Half the pods of each namespace are app=web.
//
// The point: the answer is the same, and so is the number of label
// matches; what the index saves is reading every object in the cache.
package fallback

// Your findings.
var (
	ObjectsReadWithIndex    = 0
	ObjectsReadWithoutIndex = 0
	MatchesWithIndex        = 0
	MatchesWithoutIndex     = 0
)
