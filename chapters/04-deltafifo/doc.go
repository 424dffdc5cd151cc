// Package deltafifo is chapter 4 of informer-anatomy: the queue between the
// reflector and everything that reacts to changes.
//
// The reflector (chapter 3) writes into a [DeltaFIFO] instead of a store.
// Each Add, Update and Delete becomes a [Delta] appended to its key's
// [Deltas]; a LIST becomes Replaced (or Sync) deltas plus tombstones
// ([DeletedFinalStateUnknown]) for objects that vanished while the watch was
// down; a resync becomes Sync deltas. One consumer pops a key at a time, with
// all of its pending deltas, oldest first.
//
// [Config], [New] and [Controller] run a reflector and a processLoop together;
// [NewInformer] adds a store kept in step with the popped deltas, which is
// already a working single-consumer informer. Chapter 5 builds the shared
// informer on the same pieces.
//
// It mirrors [k8s.io/client-go/tools/cache] v0.37.2 delta_fifo.go, the Queue of
// fifo.go, and the controller half of controller.go. One thing to know before
// reading on: since client-go 1.33 informers no longer use the DeltaFIFO by
// default. The RealFIFO (the_real_fifo.go) keeps every event as its own queue
// entry instead of coalescing per key, so handlers see changes strictly in
// the order they happened; since 1.36 that is locked on, and relists arrive
// as one atomic ReplacedAll entry. The DeltaFIFO is what most diagrams and
// talks describe, and its rules (coalescing, tombstones, HasSynced) are still
// what a controller author must expect; docs/04-deltafifo.md compares the two.
//
// Tracing: every delta starts its own trace, "ListAndWatch <source>", linked to
// the reflector's cycle span; Pop records the DeltaFIFO.queued wait; and
// [StartHandleDeltas] continues each popped delta's trace.
//
// See [ExampleDeltaFIFO], and docs/04-deltafifo.md for the chapter.
package deltafifo
