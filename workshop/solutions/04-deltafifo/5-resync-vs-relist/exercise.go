// Package resyncrelist is workshop exercise 04-deltafifo/5-resync-vs-relist.
//
// # Resync is not relist
//
// Kind: investigate. Minutes: 15. Needs: none. Practises: docs/04-deltafifo.md, "Resync is not relist".
//
// Run chapter 4's NewInformer (on its default queue, the DeltaFIFO) over
// the embedded API server's pods with a resync period of 1 second, in a
// testing/synctest bubble (kit.InProcessListWatch, kit.Run), for 5 seconds
// of fake time, and count the server's requests (kit.Requests,
// kit.CountRequests). Then find out what it takes to make it relist, that
// is fetch the whole state again. Answer:
//
//   - Streams, Lists, Watches: pod requests in those 5 seconds that
//     stream the state (a WATCH with sendInitialEvents=true, client-go
//     v0.37.2's default), LISTs, and plain WATCHes;
//   - SyncDeltas: whether the process function received deltas of type
//     Sync in those 5 seconds;
//   - CompactAndClose: whether Compact() then CloseWatches(), with no
//     write in between, makes it relist;
//   - WriteCompactAndClose: whether creating a ConfigMap, then Compact(),
//     then CloseWatches() makes it relist.
//
// (The old prose exercise said compacting and dropping the watches forces
// a relist. Find out why it does not on its own.)
package resyncrelist

// Your findings.
var (
	Streams, Lists, Watches = 1, 0, 0 // one stream, which goes on as the watch; a resync never talks to the server
	SyncDeltas              = true    // it re-queues the cache's objects as Sync deltas
	CompactAndClose         = false   // the reflector's RV is the newest there is: not compacted away, no 410
	WriteCompactAndClose    = true    // the write moves the server past the reflector's RV; compaction then makes it 410, and it streams again
)
