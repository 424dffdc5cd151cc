// Package viewer is workshop exercise 06-factory/5-viewer.
//
// # Follow the links in a trace viewer
//
// Kind: investigate. Minutes: 15. Needs: viewer. Practises: docs/tracing.md, the span contract and its viewer set-up.
//
// Start Jaeger (docs/tracing.md: docker run ... jaegertracing/all-in-one,
// UI on http://localhost:16686) and run the demo on the DeltaFIFO, whose
// queue coalesces:
//
//	OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 go run ./cmd/trace-demo --exporter otlp --queue deltafifo
//
// Search for service trace-demo and informer.object.key=demo/busy: the
// slow-handler lesson updates demo/busy five times in a row. Open a
// HandleDeltas span whose informer.deltas.count is above 1 and follow its
// links. Count, for those five updates, the traces they make and the links
// of each HandleDeltas. Then answer for seven updates of one key popped
// together from a DeltaFIFO:
//
//   - Traces: how many traces (roots) the seven deltas make;
//   - Links: how many links each of the seven HandleDeltas spans has.
//
// The checker cannot see your viewer: it queues seven updates on chapter
// 4's DeltaFIFO with a span recorder, pops them together, and counts.
package viewer

// Your findings.
var Traces, Links = 7, 6 // one trace per delta; each HandleDeltas links to the other six roots
