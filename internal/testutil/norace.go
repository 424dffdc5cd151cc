//go:build !race

package testutil

// Race is true in a test binary built with -race.
//
// Ours: a test helper (Go's own internal/race is not importable).
const Race = false
