// Package resyncrelist is workshop exercise 04-deltafifo/5-resync-vs-relist.
//
// # Resync is not relist
//
// Kind: investigate. Minutes: 15. Needs: none. Practises: docs/04-deltafifo.md, "Resync is not relist".
//
// Run chapter 4's NewInformer (on its default queue, the DeltaFIFO) over
// the embedded API server's pods with a resync period of 1 second, in a
// testing/synctest bubble (kit.InProcessListWatch, kit.Run), for 5 seconds
// of fake time, and look at the server's requests (kit.Requests). Then
// find out what it takes to make it relist, that is fetch the whole state
// again. Write requests as kit.Requests does: "watch rv=X stream" (a
// WATCH with sendInitialEvents=true, client-go v0.37.2's default), "watch
// rv=X" or "list rv=X limit=N", with X as sent ("" is written rv=), S for
// the resourceVersion of the initial state, and the word "later" for any
// newer one (rv=later; as in 03-reflector/1-requests).
// Answer:
//
//   - Requests: the pod requests in those 5 seconds;
//   - SyncDeltas: whether the process function received deltas of type
//     Sync in those 5 seconds;
//   - AfterCompactAndClose: the pod requests in the 30 seconds after
//     Compact() then CloseWatches(), with no write in between;
//   - AfterWriteCompactAndClose: the same after creating a ConfigMap,
//     then Compact(), then CloseWatches().
//
// (The old prose exercise said compacting and dropping the watches forces
// a relist. Find out why it does not on its own.)
package resyncrelist

var (
	// One stream, which goes on as the watch: a resync never talks to
	// the server.
	Requests   = []string{"watch rv= stream"}
	SyncDeltas = true // it re-queues the cache's objects as Sync deltas
	// The reflector's RV is the newest there is: not compacted away, no
	// 410; the watch resumes.
	AfterCompactAndClose = []string{"watch rv=S"}
	// The write moves the server past the reflector's RV; compaction then
	// makes its watch 410, and it streams the state again.
	AfterWriteCompactAndClose = []string{"watch rv=S", "watch rv=S stream"}
)
