// Package deltafifo is chapter 4 of informer-anatomy: the queue between the
// reflector and everything that reacts to changes. It holds both queues
// client-go's informers have used there.
//
// The [DeltaFIFO] is the queue most diagrams and talks describe, and the one
// client-go's informers ran up to 1.32. Each Add, Update and Delete becomes a
// [Delta] appended to its key's [Deltas]; a relist's Replace (the state
// streamed up to its bookmark, or a LIST where the server cannot stream)
// becomes Replaced (or Sync) deltas plus tombstones
// ([DeletedFinalStateUnknown]) for objects that vanished while the watch
// was down; a resync becomes Sync deltas. One
// consumer pops a key at a time, with all of its pending deltas, oldest
// first: a key's changes are coalesced, and keys keep their first place in
// line.
//
// The [RealFIFO] is the queue client-go's informers run today: since 1.33 by
// default, since 1.36 always (the InOrderInformers gate is GA and locked).
// Every change is its own entry, handed out in the order it arrived, never
// merged. Configured as client-go v0.37.2 configures it, a relist is one
// atomic [ReplacedAll] entry and a resync one [SyncAll] entry, bookmarks are
// queued, the lock is released while the consumer processes, and
// [RealFIFO.PopBatch] hands out up to 1,000 entries at once (and keeps its
// lock through the process call from 2,000 queued entries on). A handler
// must expect the same kinds of calls on both, tombstones included, but the
// rules behind them differ: the atomic RealFIFO queues no tombstones (the
// consumer derives them from the cache when it pops the ReplacedAll entry),
// its SyncAll replays every cached object, and its HasSynced counts an
// entry only once its process call has returned.
//
// The [Consumer] is what an informer does with what it pops (upstream's
// processDeltas, processDeltasInBatch and processReplacedAllInfo): it writes
// the cache, a batch in one store Transaction, and then tells a handler of
// each change. [Config], [New] and [Controller] run a reflector and a
// processLoop together; [NewInformer] adds a cache and a Consumer, a working
// single-consumer informer, on the DeltaFIFO by default or, with
// [WithRealFIFO], on client-go's v0.37.2 queue. Chapter 5 builds the shared
// informer on the same pieces, on the RealFIFO by default.
//
// It mirrors [k8s.io/client-go/tools/cache] v0.37.2: delta_fifo.go,
// the_real_fifo.go, the Queue and QueueWithBatch of fifo.go, and the
// controller half of controller.go.
//
// Tracing: every delta (every per-object entry) starts its own trace,
// "ListAndWatch <source>", linked to the reflector's cycle span; a pop records
// the DeltaFIFO.queued or RealFIFO.queued wait; [StartHandleDeltas] and
// [StartHandleDeltasInBatch] continue each popped delta's trace, and
// [StartAtomicObject] gives every object of an atomic entry its own.
//
// Examples: ExampleDeltaFIFO (coalescing and a tombstone), ExampleRealFIFO
// (every change in order, an atomic relist, a bookmark),
// ExampleRealFIFO_PopBatch (where a batch stops), ExampleConsumer (an
// atomic relist applied: cache first, then deletes, then the list in order)
// and ExampleNewInformer_realFIFO (client-go's informer of today against an
// in-process API server). docs/04-deltafifo.md is the chapter, with a
// side-by-side table of what each queue pops for the same input.
package deltafifo
