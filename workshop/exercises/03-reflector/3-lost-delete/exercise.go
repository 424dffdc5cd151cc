// Package lostdelete is workshop exercise 03-reflector/3-lost-delete.
//
// # Lose a delete, then find it
//
// Kind: investigate. Minutes: 15. Needs: none. Practises: docs/03-reflector.md, "Every failure mode".
//
// A reflector fills a store with pods p-0 and p-1 from the embedded API
// server. The watch stays open for over a second (so the rule about very
// short watches plays no part), then the server is stopped, p-0 is
// deleted (the server keeps its data in process), the history is
// compacted, and the server restarted. The reflector never receives a
// DELETED event for p-0, yet p-0 leaves its store.
//
// Run it yourself with the kit (kit.StartServer, kit.ListWatch,
// kit.NewRecordingStore, kit.Run, and Reflector.SetWatchErrorHandler to
// see the errors), then answer:
//
//   - RemovedBy: the store method that removed p-0: "Add", "Update",
//     "Delete" or "Replace";
//   - Status: the HTTP status code of the API error the reflector's
//     WatchErrorHandler received just before it listed again.
package lostdelete

// Your findings.
var (
	RemovedBy = ""
	Status    = 0
)
