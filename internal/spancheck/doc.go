// Package spancheck reads the spans the informer exported and checks them
// against the span contract (docs/span-contract.md): every handler call
// must hang from a complete chain back to its root, and every per-object root
// must either reach HandleDeltas or end, dropped at the informer's stop, with
// a queue wait span marked informer.queue.dropped ([Index.CheckRoots],
// [Index.DroppedChains]). Past the handler, every reconcile of a traced
// workqueue must hang, through workqueue.queued and workqueue.add, from the
// handler call that added its key ([Index.ReconcileChains],
// [ReconcileChain.Check], [ReconcileChain.FromWatch]).
//
// One Span type serves both sources a reader meets: spans still in the
// process (from the SDK, for the demo's waterfall) and spans written by the
// stdouttrace exporter (for tests that check what a trace viewer would get).
//
// [ExampleReadStdoutTrace] reads an exported file and checks every handler
// call's chain, as the demo's tests do.
package spancheck
