// Package slowlistener is workshop exercise 05-processor/1-slow-listener.
//
// # A slow handler
//
// Kind: investigate. Minutes: 15. Needs: none. Practises: docs/05-processor.md, "Why the buffer is unbounded, and what that costs".
//
// Chapter 5's shared informer, on the RealFIFO (processor.RealFIFOQueue,
// its default), watches pods of the embedded API server with two handlers
// added in this order: a fast kit.Recorder and a kit.Recorder with Delay
// 20 ms. Then 30 pods are created one by one, each as soon as the fast
// handler has the one before. Use kit.StartInformer with
// kit.InformerOptions{Spans: kit.NewSpans()} and look at the "pop" spans:
// informer.listener names the listener ("<handler type>#<index>") and
// informer.listener.pending is how long its ring buffer was when the
// notification arrived. Answer:
//
//   - Slowest: the informer.listener value whose pending grew largest;
//   - FastDoneFirst: whether the fast handler received its last call
//     before the slow one did (compare the Recorders' Calls()[i].At);
//   - PopSpans: how many "pop" spans the run records, both listeners
//     together (work it out from how notifications reach listeners, then
//     count them in the spans).
//
// Why does the slow handler not slow the fast one down, and what does it
// cost instead?
package slowlistener

// Your findings.
var (
	Slowest       = "*kit.Recorder#1" // the second handler added: index 1
	FastDoneFirst = true              // each listener has its own goroutines and buffer
	PopSpans      = 60                // one pop per notification per listener: 30 creates × 2 listeners
)
