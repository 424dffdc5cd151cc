// Package cputime reads the CPU time this process has used, for the
// benchmarks that report it per iteration beside the wall clock (the
// cpu-ns/op metric of chapter 5's and cmd/trace-demo's benchmarks).
//
// On a machine shared with other work, waiting for a core stretches the
// wall clock of one variant and not the other's, but not the CPU time the
// variant itself needed; comparing CPU time keeps such a comparison fair.
//
// It is benchmark support, not part of the informer stack: nothing here
// mirrors client-go.
package cputime
