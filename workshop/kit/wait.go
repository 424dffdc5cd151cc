package kit

import (
	"context"
	"testing"
	"time"
)

// WaitTimeout is how long [WaitFor] waits before it fails the test.
var WaitTimeout = 20 * time.Second

// WaitFor polls cond every few milliseconds until it is true, and fails t
// with "timed out waiting for <what>" after WaitTimeout. Inside a
// testing/synctest bubble the polling sleeps are fake time.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Run starts run (a Reflector's, Controller's or informer's RunWithContext)
// in a goroutine and returns stop, which cancels its context and waits for
// it to return. Call stop before a testing/synctest bubble ends.
func Run(run func(ctx context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); run(ctx) }()
	return func() { cancel(); <-done }
}
