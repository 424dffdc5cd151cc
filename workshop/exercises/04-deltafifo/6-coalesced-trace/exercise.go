// Package coalescedtrace is workshop exercise 04-deltafifo/6-coalesced-trace.
//
// # Read a trace of coalesced deltas
//
// Kind: investigate. Minutes: 15. Needs: none. Practises: docs/04-deltafifo.md, "Tracing".
//
// Three updates of one pod wait in a DeltaFIFO and are popped together.
// Each delta keeps its own trace (docs/tracing.md, the span contract):
// its root "ListAndWatch watch" (attribute informer.resource_version), its
// wait span "DeltaFIFO.queued", and its "HandleDeltas", which links to
// the roots of the deltas popped with it.
//
// Reproduce it: a kit.NewSpans() recorder; chapter 4's
// NewDeltaFIFOWithOptions with TracerProvider: spans.Provider() and
// KnownObjects: a chapter-1 store; UpdateWithContext(context.Background(),
// pod) three times with resourceVersions 41, 57 and 63 (a few
// milliseconds apart); one Pop whose process function calls
// deltafifo.StartHandleDeltas(tracer, name, key, deltas, initial) and ends
// every span it returns. Find the spans with spans.Named(...),
// spans.InTrace(...) and kit.Attr, and answer:
//
//   - Count: the informer.deltas.count attribute of a HandleDeltas span;
//   - LinkedRVs: the HandleDeltas span in the trace of the delta at
//     resourceVersion 57 links to other spans: the
//     informer.resource_version of each span it links to, sorted;
//   - LongestWaitRV: the resourceVersion of the delta whose
//     DeltaFIFO.queued span lasted longest.
package coalescedtrace

// Your findings.
var (
	Count         = ""
	LinkedRVs     []string
	LongestWaitRV = ""
)
