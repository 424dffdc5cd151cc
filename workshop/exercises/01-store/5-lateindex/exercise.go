// Package lateindex is workshop exercise 01-store/5-lateindex.
//
// # A late index
//
// Kind: predict. Minutes: 5. Needs: none. Practises: docs/01-store.md, "Indexes and their invariant".
//
// A store without indexes holds five pods, three labelled app=web and two
// app=db. Then AddIndexers({"byApp": <the pod's app label>}). Then
// AddIndexers again, with two indexes: {"byApp": <the same function>,
// "byTier": <the pod's tier label>}. The checker does this on chapter 1's
// store and on client-go's. Predict:
//
//   - WebPods: how many pods ByIndex("byApp", "web") returns right after
//     the first AddIndexers, for objects stored before the index existed;
//   - Indexes: the names of the store's indexes after the second
//     AddIndexers (the keys of GetIndexers(), sorted);
//   - StillWebPods: how many pods ByIndex("byApp", "web") returns after
//     the second AddIndexers.
package lateindex

// Your predictions.
var (
	WebPods      = -1
	Indexes      []string
	StillWebPods = -1
)
