//go:build !unix

package cputime_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/internal/cputime"
)

// Where it is not measured, the count is 0, never a made-up number.
func TestProcessIsZeroWhereNotMeasured(t *testing.T) {
	require.Zero(t, cputime.Process())
}
