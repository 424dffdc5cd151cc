//go:build unix

package cputime_test

import (
	"fmt"

	"github.com/informer-anatomy/informer-anatomy/internal/cputime"
)

// CPU time per iteration, as the benchmarks report it beside ns/op.
func ExampleProcess() {
	const n = 1000
	start := cputime.Process()
	sum := 0
	for i := range n {
		sum += i
	}
	perOp := (cputime.Process() - start) / n
	fmt.Println(sum, perOp >= 0)
	// Output: 499500 true
}
