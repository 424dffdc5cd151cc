// Package latehandler is workshop exercise 05-processor/6-late-handler.
//
// # The late handler
//
// Kind: predict. Minutes: 10. Needs: none. Practises: docs/05-processor.md, "Handler rules".
//
// Chapter 5's shared informer (on the RealFIFO, its default) has synced
// three pods with one handler: p-0, p-1 and p-2, in namespace default
// (kit.CreatePods(t, srv, "p", 3)). Then a second handler, a kit.Recorder, is
// added with AddEventHandler, and the informer is traced with kit.Spans.
// Predict:
//
//   - Calls: the late handler's calls once it has synced, sorted (it never
//     saw the initial state or any watch event);
//   - Initial: the isInInitialList flag of those calls;
//   - Root: the name of the root span of their traces (they come from no
//     ListAndWatch: docs/tracing.md, the span contract).
//
// Which lock makes sure a pod created while AddEventHandler runs reaches
// the late handler exactly once (not twice, not never)?
package latehandler

// Your predictions.
var (
	Calls   []string
	Initial = false
	Root    = ""
)
