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
// See [ExampleNewSharedIndexInformer], and docs/05-processor.md.
package processor
