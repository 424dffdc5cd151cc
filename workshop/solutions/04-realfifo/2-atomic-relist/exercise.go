// Package atomicrelist is workshop exercise 04-realfifo/2-atomic-relist.
//
// # An atomic relist
//
// Kind: predict. Minutes: 10. Needs: none. Practises: docs/04-deltafifo.md, "Relists: per event, or one `ReplacedAll` entry".
//
// The informer's cache holds a@1 and b@2 (pods named a and b, like every
// pod here in namespace default). A relist returns b@3 and c@4:
// the reflector calls Replace([b@3, c@4], "10") on a RealFIFO with
// AtomicEvents (chapter 5's default queue). The checker pops until the
// queue is empty, each Pop handing the entry to chapter 4's Consumer
// (which writes the cache, then calls the handler once per change), and
// the handler records "add KEY", "update KEY", "delete KEY" or
// "delete KEY (tombstone)" the way a ResourceEventHandler would be called.
//
// Predict:
//
//   - Pops: how many Pop calls empty the queue;
//   - Calls: the handler calls, in order.
//
// On a DeltaFIFO the same relist would be three queue entries, popped
// one by one, with the cache half old, half new in between. What does a
// lister read between two handler calls here?
package atomicrelist

// Your predictions.
var (
	Pops  = 1 // one ReplacedAll entry for the whole list
	Calls = []string{
		"delete default/a (tombstone)", // tombstones first: a was in the cache, not in the list
		"update default/b",
		"add default/c",
	}
)
