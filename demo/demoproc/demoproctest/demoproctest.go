// Package demoproctest is demoproc for tests: each call fails the test on
// an error, and a demo a test started is stopped when the test ends.
// Ours: nothing here mirrors client-go.
package demoproctest

import (
	"testing"
	"time"

	"github.com/informer-anatomy/informer-anatomy/demo/demoproc"
)

// Build is [demoproc.Build]; a failed build fails t with the compiler's
// output.
func Build(t testing.TB) string {
	t.Helper()
	bin, err := demoproc.Build()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Start is [demoproc.Start]; a demo that does not print its URL fails t
// with its output, and a demo still running when t ends is stopped as by
// [demoproc.Proc.Stop].
func Start(t testing.TB, timeout time.Duration, bin string, args ...string) *demoproc.Proc {
	t.Helper()
	p, err := demoproc.Start(timeout, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = p.Stop() })
	return p
}
