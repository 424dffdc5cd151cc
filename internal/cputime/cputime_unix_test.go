//go:build unix

package cputime_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/internal/cputime"
)

// The count is this process's: it is above zero once the process has run,
// and work on the CPU moves it forward.
func TestProcessCountsThisProcessesCPU(t *testing.T) {
	before := cputime.Process()
	require.Positive(t, before)
	sum := 0
	for i := 0; cputime.Process() == before; i++ {
		require.Less(t, i, 1_000_000_000, "a billion rounds of work and no CPU time counted")
		for j := range 1000 {
			sum += j ^ i
		}
	}
	require.Greater(t, cputime.Process(), before)
	_ = sum
}
