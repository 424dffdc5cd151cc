//go:build workshop

package poploop

// The answer is concurrent code: the runner runs this checker under the
// race detector, never from the test cache.
//
//workshop:concurrent

import (
	"runtime"
	"testing"
	"time"

	// The kit's watchdog: an exercise package whose initialisation never
	// ends is reported, not left to go test's kill a minute later.
	_ "github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

const patience = 2 * time.Second

// First, and not parallel: while it runs, no other test starts or ends a
// goroutine, so the count it takes is Pop's alone.
func TestPopRunsInItsOwnGoroutineOnly(t *testing.T) {
	before := runtime.NumGoroutine()
	in, out := make(chan any), make(chan any)
	done := make(chan struct{})
	go func() { Pop(in, out); close(done) }()
	for i := range 3 {
		select {
		case in <- i:
		case <-time.After(patience):
			t.Fatal("Pop does not receive from in")
		}
	}
	// Pop holds three notifications that nobody has read: a goroutine it
	// started to forward them is still there, blocked on out.
	if n := runtime.NumGoroutine() - before; n > 1 {
		t.Errorf("while Pop held 3 notifications that nobody had read, %d goroutines ran for it: Pop must do its work in the goroutine that calls it. A second goroutine draining a channel makes the channel's capacity a bound on the buffer (a full one blocks the sender), and outlives Pop", n)
	}
	close(in)
	select {
	case <-done:
	case <-time.After(patience):
		t.Fatal("after in was closed Pop did not return (it must not wait for out's reader to take the buffered notifications)")
	}
}

func TestNeverBlocksTheSenderAndKeepsOrder(t *testing.T) {
	t.Parallel()
	in, out := make(chan any), make(chan any)
	go Pop(in, out)
	sent := make(chan struct{})
	go func() {
		for i := range 10000 {
			in <- i
		}
		close(sent)
	}()
	select {
	case <-sent:
	case <-time.After(patience):
		t.Fatal("10,000 sends on in, with nobody reading out, did not complete: Pop must buffer instead of waiting for out's reader")
	}
	receiveInOrder(t, out, 10000)
	close(in)
}

func TestInterleavedReadsAndWrites(t *testing.T) {
	t.Parallel()
	in, out := make(chan any), make(chan any)
	go Pop(in, out)
	go func() {
		for i := range 1000 {
			in <- i
			if i%7 == 0 {
				time.Sleep(10 * time.Microsecond)
			}
		}
	}()
	receiveInOrder(t, out, 1000)
	close(in)
}

// receiveInOrder reads n notifications from out, which must be 0 to n-1
// in order, waiting at most patience for each.
func receiveInOrder(t *testing.T, out <-chan any, n int) {
	t.Helper()
	for i := range n {
		select {
		case got := <-out:
			if got != i {
				t.Fatalf("notification %d came out as %v: order must be kept", i, got)
			}
		case <-time.After(patience):
			t.Fatalf("out gave %d of %d notifications, then nothing", i, n)
		}
	}
}

func TestClosingInClosesOut(t *testing.T) {
	t.Parallel()
	in, out := make(chan any), make(chan any)
	done := make(chan struct{})
	go func() { Pop(in, out); close(done) }()
	for i := range 3 {
		select {
		case in <- i:
		case <-time.After(patience):
			t.Fatal("Pop does not receive from in")
		}
	}
	close(in)
	select {
	case <-done:
	case <-time.After(patience):
		t.Fatal("after in was closed Pop did not return (it must not wait for out's reader to take the buffered notifications)")
	}
	// out must be closed: ranging over it is how a listener's run loop
	// learns that it was removed. Read it until closed, but not forever.
	// Pop has returned, so nothing it buffered may still come out: a
	// removed handler gets nothing more.
	n := 0
	for {
		select {
		case _, ok := <-out:
			if !ok {
				if n > 0 {
					t.Errorf("after in was closed and Pop had returned, out still gave %d of the 3 notifications nobody had read before it was closed: what Pop still buffers when in closes is dropped, not delivered", n)
				}
				return
			}
			n++
			if n > 3 {
				t.Fatalf("out gave %d notifications after 3 were sent", n)
			}
		case <-time.After(patience):
			t.Fatalf("Pop returned after in was closed, but out was never closed: a reader ranging over out (the listener's run loop) waits forever. Close out when Pop returns")
		}
	}
}
