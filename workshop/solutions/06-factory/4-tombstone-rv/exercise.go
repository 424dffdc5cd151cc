// Package tombstonerv is workshop exercise 06-factory/4-tombstone-rv.
//
// # Which resourceVersion does a tombstone's trace carry?
//
// Kind: investigate. Minutes: 15. Needs: none. Practises: docs/tracing.md, and docs/04-deltafifo.md, "Tombstones: why handlers must expect DeletedFinalStateUnknown".
//
// cmd/trace-demo's relist lesson, as an exercise. The embedded API server
// (kit.StartServer) holds two pods of namespace default, p-0 and p-1
// (kit.CreatePods(t, srv, "p", 2)). A factory
// (factory.WithTracerProvider(spans.Provider())) runs a pod informer on
// its default queue (the RealFIFO) with a kit.Recorder, started and
// synced. Pod p-0 is updated once (a label added; its resourceVersion
// becomes U). Then, with the watch open for over a second: the server is
// stopped (srv.Stop()), p-0 deleted (at resourceVersion D), a pod named
// new created (kit.Pod("", "new")), history compacted (srv.Compact()),
// and the server restarted (srv.Restart()). The relist (a new stream, as
// client-go v0.37.2's reflector fetches the whole state) turns p-0 into a
// DeletedFinalStateUnknown, and its trace root, a "ListAndWatch
// watchlist" span with informer.event.type TOMBSTONE, carries
// informer.resource_version. Answer:
//
//   - TombstoneRV: is that resourceVersion "last known" (U, the last state
//     the informer saw), "list" (the relist's: the one its stream's
//     bookmark gave) or "deletion" (D)?
//   - Calls: every call the kit.Recorder received, in order, as its
//     Strings() writes them ("add default/p-0", "delete default/p-0
//     (tombstone)", ...), from the start until the relist has been
//     handled.
//
// Why can it never be the resourceVersion of the deletion itself?
package tombstonerv

var (
	// The deletion was never seen: only the last state the cache held is
	// known.
	TombstoneRV = "last known"
	// The initial list, the update, then the relist as one ReplacedAll
	// entry on the RealFIFO: first the tombstone for what the list lacks,
	// then the list, in its order (new, p-1), an add for what the cache
	// did not have and an update for what it had.
	Calls = []string{
		"add default/p-0",
		"add default/p-1",
		"update default/p-0",
		"delete default/p-0 (tombstone)",
		"add default/new",
		"update default/p-1",
	}
)
