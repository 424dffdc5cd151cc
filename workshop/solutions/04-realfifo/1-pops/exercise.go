// Package pops is workshop exercise 04-realfifo/1-pops.
//
// # Predict, then pop (RealFIFO)
//
// Kind: predict. Minutes: 10. Needs: none. Practises: docs/04-deltafifo.md, "Part 2 — the RealFIFO".
//
// The same calls as 04-deltafifo/1-pops, on the queue client-go's
// informers run today: a RealFIFO with AtomicEvents (the setting chapter
// 5's shared informer uses by default):
//
//	Add(a@1) Add(b@2) Update(a@3) Delete(b@4) Delete(b@5) Update(a@6)
//
// Predict every Pop until the queue is empty, in kit.DescribeDeltas form
// ("default/a: Added@1"). The checker runs chapter 4's RealFIFO and
// client-go's, and both must pop exactly your strings. Compare with your
// DeltaFIFO answer: what does a handler now see that it did not before?
package pops

// Pops is your prediction.
var Pops = []string{
	// One entry per call, in arrival order: no per-key grouping, no dedup.
	"default/a: Added@1",
	"default/b: Added@2",
	"default/a: Updated@3",
	"default/b: Deleted@4",
	"default/b: Deleted@5",
	"default/a: Updated@6",
}
