// Package testutil holds the helpers that the tests of several packages
// share, so that each is written once: waiting for a condition the code
// under test converges to, putting handler-call logs in a comparable
// order, reading the lines a call logged, an API server that refuses
// everything (to read a reflector's backoff from), a workqueue metrics
// provider that keeps what a queue reports, and a port-forward for the
// live view's tests.
//
// It sits below the chapters (internal/): any package's tests may import
// it, and it imports no package of this module (client-go's and
// apimachinery's types are fine; a helper that needs a chapter's belongs in
// that chapter's tests).
package testutil

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Limit is how long Eventually and WaitFor wait. It is a deadline to fail
// by, so that a bug fails instead of hanging, not a timing assertion:
// every condition waited for is one the code converges to.
const Limit = 20 * time.Second

// tick is how often the condition is polled.
const tick = 5 * time.Millisecond

// Eventually fails t, naming what it waited for, unless cond holds within
// Limit.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, Limit, tick, "waited %v for %s", Limit, what)
}

// WaitFor reports whether cond holds within Limit, for a caller that says
// itself what went wrong.
func WaitFor(cond func() bool) bool {
	deadline := time.Now().Add(Limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(tick)
	}
	return true
}

// SortRuns returns calls with every run of consecutive calls of one kind
// sorted, for each kind given (a call is of a kind when the function says
// so; the first kind that matches a call decides its run). Everything else
// keeps its order. Two informers' logs are compared this way where
// client-go hands a run over in a map's order (a relist's tombstones, a
// resync, a streamed initial state) and ours in key order.
func SortRuns(calls []string, kinds ...func(call string) bool) []string {
	out := slices.Clone(calls)
	for i := 0; i < len(out); {
		j := i
		for _, kind := range kinds {
			for j < len(out) && kind(out[j]) {
				j++
			}
			if j > i {
				break
			}
		}
		if j > i {
			slices.Sort(out[i:j])
			i = j
		} else {
			i++
		}
	}
	return out
}
