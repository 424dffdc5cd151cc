//go:build amd64 || arm64

package handlerctx

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Built where currentG is the assembly's: there a goroutine's emptied
// registrations stay in its shard's map (keepEmpty). The fallback for other
// architectures drops an emptied entry, so its next registration
// allocates, and this test does not apply to it.

// TestRegisterAllocatesNothingOnceWarm: a goroutine that registered once
// registers, looks up and ends again without allocating (a handler call
// pays this on every event while a traced queue is alive).
func TestRegisterAllocatesNothingOnceWarm(t *testing.T) {
	Register(sc(1)).Exit()
	allocs := testing.AllocsPerRun(100, func() {
		tok := Register(sc(1))
		Current()
		tok.Exit()
	})
	require.Zero(t, allocs)
	require.Zero(t, Active())
}
