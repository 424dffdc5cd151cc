// Package lateindex is workshop exercise 01-store/5-lateindex.
//
// # A late index
//
// Kind: predict. Minutes: 5. Needs: none. Practises: docs/01-store.md, "Indexes and their invariant".
//
// A store without indexes holds five pods, three labelled app=web. Then
// AddIndexers({"byApp": <the pod's app label>}). Predict:
//
//   - WebPods: how many pods ByIndex("byApp", "web") returns right after,
//     for objects that were stored before the index existed;
//   - SecondAddFails: whether AddIndexers({"byApp": ...}) a second time is
//     an error;
//   - StillWebPods: how many ByIndex("byApp", "web") returns after that
//     second call.
package lateindex

// Your predictions.
var (
	WebPods        = 0
	SecondAddFails = false
	StillWebPods   = 0
)
