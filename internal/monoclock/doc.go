// Package monoclock reads the runtime's monotonic clock alone, for the
// durations the informer measures on every event when something reads
// them (a handler call's, a process call's): [Now] and [Since] are
// [time.Since] of one Time taken when the process starts, which reads the
// monotonic clock without the wall-clock read [time.Now] adds to it.
// Inside a testing/synctest bubble time.Since reads the bubble's clock,
// and so do they.
//
// Why: on the virtual machines controllers run on, each clock read is a
// vDSO call of a few tens of nanoseconds (a CPU profile of dropin's
// informer with its Prometheus metrics on put 60 ns under time.Now and 23
// ns under time.Since per handler call, docs/performance.md), and an
// event with four handlers times five calls. A duration never needs the
// wall clock, so reading it is work with no use. Ours: client-go times its
// process calls with time.Now (the_real_fifo.go, whileProcessing_locked)
// and no handler call at all.
//
// See [Example] for a duration measured with it.
package monoclock
