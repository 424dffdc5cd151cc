//go:build workshop

package unlock

import (
	"fmt"
	"testing"
	"time"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

// addReturns queues left+1 entries, pops one with a blocking process
// function, and reports whether an Add from another goroutine returns
// within two seconds meanwhile.
func addReturns(t *testing.T, unlock bool, left int) bool {
	q := deltafifo.NewRealFIFOWithOptions(deltafifo.RealFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc, AtomicEvents: true, UnlockWhileProcessing: unlock})
	for i := range left + 1 {
		_ = q.Add(kit.Pod("", fmt.Sprint("p", i)))
	}
	inside, release := make(chan struct{}), make(chan struct{})
	popped := make(chan struct{})
	go func() {
		_, _ = q.Pop(func(any, bool) error { close(inside); <-release; return nil })
		close(popped)
	}()
	<-inside
	added := make(chan struct{})
	go func() { _ = q.Add(kit.Pod("", "late")); close(added) }()
	var returned bool
	select {
	case <-added:
		returned = true
	case <-time.After(2 * time.Second):
	}
	close(release)
	<-popped
	<-added
	return returned
}

func TestPredictions(t *testing.T) {
	for _, p := range []struct{ name, you string }{{"WithUnlock", WithUnlock}, {"WithoutUnlock", WithoutUnlock}} {
		if p.you != "returns" && p.you != "waits" {
			t.Errorf("%s: you wrote %q; write one of the two words the task gives", p.name, p.you)
		}
	}
	word := func(returned bool) string {
		if returned {
			return "returns"
		}
		return "waits"
	}
	// One message for the two returns/waits answers: naming the wrong one
	// would say which to change.
	if word(addReturns(t, true, 0)) != WithUnlock || word(addReturns(t, false, 0)) != WithoutUnlock {
		t.Errorf("your answers about whether Add returns while the process function blocks are not what it did: with and without UnlockWhileProcessing, who holds the queue's lock during the process call?")
	}
	if KeepsLockFrom < 1 {
		t.Fatalf("KeepsLockFrom: you wrote %d; it is a number of entries, at least 1", KeepsLockFrom)
	}
	// Whether Add returned just below and at the participant's number
	// would say in which direction to move it: a bisection instead of the
	// line of code. The message says only that it is not the threshold.
	below, at := addReturns(t, true, KeepsLockFrom-1), addReturns(t, true, KeepsLockFrom)
	if !below || at {
		t.Errorf("KeepsLockFrom: you wrote %d, which is not the number of queued entries at which the Pop starts keeping the lock: read the condition in RealFIFO.whileProcessing_locked, and what the batch size is", KeepsLockFrom)
	}
}
