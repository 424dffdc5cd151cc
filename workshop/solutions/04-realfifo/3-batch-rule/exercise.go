// Package batchrule is workshop exercise 04-realfifo/3-batch-rule.
//
// # The RealFIFO's batch rule
//
// Kind: build. Minutes: 15. Needs: none. Practises: docs/04-deltafifo.md, "Batch pops".
//
// RealFIFO.PopBatch hands a run of the oldest entries to the informer at
// once, so that one lock hold and one cache transaction serve many
// changes. Write BatchLen: given the queued entries (oldest first, at
// least one) and how many entries of the initial list are still queued,
// how many entries does the next PopBatch take? The run is as long as
// possible but stops before:
//
//   - the batch size, 1,000 entries;
//   - the end of the initial list, while any of it is queued (initialLeft
//     > 0), so that every entry of a batch has the same isInInitialList;
//   - an entry whose type is not batchable: only Added, Updated, Deleted,
//     Replaced and Sync are; ReplacedAll, SyncAll and Bookmark entries go
//     alone (one at the front is a run of 1);
//   - a second entry for a key already in the run: a batch never holds two
//     states of one object.
//
// The checker runs a table, then random sequences (fixed seed) through
// chapter 4's real RealFIFO and requires BatchLen to predict every
// PopBatch.
package batchrule

import deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"

// Entry is a queued entry as PopBatch sees it.
type Entry struct {
	Type deltafifo.DeltaType
	Key  string
}

// BatchSize is the most entries one PopBatch takes.
const BatchSize = 1000

// BatchLen returns how many of queued the next PopBatch takes.
func BatchLen(queued []Entry, initialLeft int) int {
	limit := min(len(queued), BatchSize)
	if initialLeft > 0 {
		limit = min(limit, initialLeft)
	}
	if limit <= 1 {
		return 1 // one entry is taken whatever it is
	}
	seen := map[string]bool{}
	for i, e := range queued[:limit] {
		switch e.Type {
		case deltafifo.Added, deltafifo.Updated, deltafifo.Deleted, deltafifo.Replaced, deltafifo.Sync:
		default:
			return max(i, 1) // not batchable: alone, or ends the run
		}
		if seen[e.Key] {
			return i
		}
		seen[e.Key] = true
	}
	return limit
}
