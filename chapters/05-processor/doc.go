// Package processor is chapter 5 of informer-anatomy: the shared informer,
// where one cache and one watch serve any number of event handlers.
//
// The path of a change, as the diagrams draw it and as the code names it:
//
//	RealFIFO.PopBatch ─▶ HandleDeltas ─▶ indexer (write first)
//	                                  └▶ sharedProcessor.distribute
//	                                        └▶ processorListener.add ─addCh─▶ pop ─nextCh─▶ run ─▶ your handler
//
// [HandleDeltas] writes each delta to the cache, then hands one notification
// to every listener. A listener's pop goroutine takes it from addCh at once
// and keeps it in a growing ring buffer until its run goroutine, which calls
// the handler, is ready for it. So distribute never waits on handler code: a
// slow handler delays only its own notifications, at the price of an
// unbounded buffer.
//
// It mirrors [k8s.io/client-go/tools/cache] v0.37.2 shared_informer.go
// ([SharedIndexInformer], [NewSharedIndexInformer], sharedProcessor,
// processorListener) and the handler half of controller.go
// ([ResourceEventHandler], [ResourceEventHandlerFuncs],
// [FilteringResourceEventHandler]). It runs on chapter 4's RealFIFO,
// configured as client-go v0.37.2's informers configure theirs (atomic
// relists and resyncs, unlocked processing, batch pops); the option
// [SharedIndexInformerOptions].Queue = [DeltaFIFOQueue] runs it on the
// DeltaFIFO, client-go's informer queue up to 1.32, instead
// (docs/05-processor.md).
//
// With a TracerProvider, every handler call is the end of a chain of spans
// back to the object's own root: HandleDeltas, Indexer.*, distribute, then per
// listener addCh, pop, nextCh and OnAdd/OnUpdate/OnDelete, the waits measured
// where they happened.
//
// # Every hop, by file and function
//
// A change's way from the queue to a handler crosses chapters 4 and 5:
//
//  1. chapters/04-deltafifo/controller.go, controller.processLoop: pops the
//     queue (RealFIFO.PopBatch in real_fifo.go; DeltaFIFO.Pop or PopBatch
//     on the DeltaFIFO) with this package's process functions.
//  2. informer.go, sharedIndexInformer.HandleDeltas (one entry) or
//     handleBatchDeltas (a batch): takes blockDeltas and hands the entry to
//     chapter 4's consumer.
//  3. chapters/04-deltafifo/consumer.go, Consumer.ProcessDeltas or
//     ProcessDeltasInBatch (processOne, processReplacedAll, processSyncAll):
//     writes the indexer first, then calls its Handler for each change,
//     which is this package's notify.
//  4. informer.go, sharedIndexInformer.notify: makes the notification and
//     calls sharedProcessor.distribute.
//  5. processor.go, sharedProcessor.distribute: processorListener.add for
//     every listener (every one due, for a resync), into its addCh.
//  6. processor.go, processorListener.pop: from addCh into the listener's
//     ring buffer, and out to nextCh when run is ready.
//  7. processor.go, processorListener.run: calls the handler (OnAdd,
//     OnUpdate, OnDelete), and, for a handler that asks
//     ([CallSpanHandler]), tells it first which span the call is (or that
//     the TraceFilter left it out), which is how package dropin continues
//     the trace into a traced workqueue.
//
// # Lock order
//
// Locks are taken in this order and never the other way round:
// startedLock → blockDeltas → the processor's listenersLock → a listener's
// resyncLock. Processing that runs under the queue's own lock (the
// DeltaFIFO's Pop) adds the queue lock in front of blockDeltas; the
// RealFIFO, as client-go's, releases its lock while processing. Two sends
// happen under these locks and can wait: distribute's send to a full addCh
// (under blockDeltas and listenersLock read-locked, until that listener's
// pop drains it, which it always does without taking any of them), and
// AddEventHandler's synthetic adds (under startedLock and blockDeltas, the
// same way). TestLocksAreTakenInTheDocumentedOrder (lockorder_test.go)
// reads this package's source and fails on any function that takes these
// locks out of order, itself or through a call.
//
// See [ExampleNewSharedIndexInformer], and docs/05-processor.md.
package processor
