// Command trace-demo shows the path of every object through this
// repository's informer (chapters 1–6), as OpenTelemetry spans and as a
// waterfall in the terminal:
//
//	ListAndWatch → RealFIFO.queued (or DeltaFIFO.queued) → HandleDeltas
//	  → Indexer + distribute → addCh → pop → nextCh → OnAdd / OnUpdate / OnDelete
//
// With no flags it starts the embedded API server (internal/apiserver),
// builds a pod informer through the chapter-6 factory with three handlers
// (one deliberately slow) on the RealFIFO, client-go v0.37.2's queue
// (--queue deltafifo: the DeltaFIFO, client-go's up to 1.32), runs eight
// lessons and stops by itself. The informer fetches its initial state as
// client-go v0.37.2's does, with a stream (a WATCH with
// sendInitialEvents=true: every object, then a bookmark, then the changes
// on the same connection):
//
//   - basic: a create, an update and a delete seen by watch;
//   - coalesce: on a DeltaFIFO informer of its own (the lesson teaches that
//     queue), two changes that land in the queue while the object's delta
//     from the initial state is still there, so Pop returns three deltas at
//     once;
//   - order: the same writes on two informers, one per queue, shown side by
//     side from each handler's recorded calls: the RealFIFO hands every
//     event over in the API server's order, the DeltaFIFO a key's changes
//     in a row, keys in first-arrival order;
//   - slow-handler: five quick updates behind a 3 ms handler, waiting in its
//     ring buffer while the other listeners are done;
//   - relist: a pod deleted while the watch is down comes back as a
//     DeletedFinalStateUnknown after the relist, a new stream (no LIST); on
//     the RealFIFO the relist is one ReplacedAll entry, and each object's
//     trace links to it; the reflector's requests, read from a probe on its
//     ListerWatcher, are printed;
//   - fallback: the API server refuses streams (422 Invalid, as a
//     kube-apiserver whose WatchList feature is off) and a relist is
//     forced: the reflector falls back to LIST, then WATCH, and its
//     requests are printed;
//   - late-handler: a handler added after sync gets synthetic adds;
//   - resync: only the handler that asked for a resync gets Sync updates.
//
// Each step waits for its effect to reach every handler instead of
// sleeping, and gives up with an error after 20 s, so the demo cannot hang.
// It prints about one screen: a line per lesson, one waterfall and a short
// summary; --verbose adds each lesson's waterfall and the full summary. When
// it stops, the deltas still queued end their traces as dropped
// (informer.queue.dropped), and the summary counts them apart.
//
// With --cluster, --kubeconfig or --context it watches a real cluster (any
// resource, --namespace), optionally making its own traffic (--generate).
// Before the informer starts, one LIST and one short WATCH check that the
// cluster is reachable, trusted, and lets the user list and watch the
// resource (the informer streams with a WATCH, and LISTs where the server
// cannot stream); if not, the demo says why in one line and exits 1.
//
// Spans go nowhere unless asked: to stdouttrace JSON with --out FILE (--out -
// for standard output, with --quiet), or to OTLP/HTTP with --exporter otlp
// (OTEL_EXPORTER_OTLP_ENDPOINT, validated; http://localhost:4318/v1/traces
// when unset). The terminal view is drawn from the same spans, collected by
// a second span processor. docs/tracing.md explains how to read it.
//
// Exit codes: 0 success, 1 a failed run (cluster problem, export failure, a
// trace that breaks the span contract), 2 bad flags.
package main
