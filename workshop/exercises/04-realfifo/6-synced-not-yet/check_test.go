//go:build workshop

package syncednotyet

import (
	"fmt"
	"strings"
	"testing"
	"time"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

type queue interface {
	Replace([]any, string) error
	Pop(deltafifo.PopProcessFunc) (any, error)
	HasSynced() bool
}

// ask calls q.HasSynced from another goroutine; the answer comes on the
// channel.
func ask(q queue) <-chan bool {
	got := make(chan bool, 1)
	go func() { got <- q.HasSynced() }()
	return got
}

// during pops the initial list (pops entries) and asks HasSynced while the
// last one is being processed: if no answer comes within a second, the
// call waits for the process function, and its value is read once that
// has returned. Then it asks again after the Pop.
func during(q queue, pops int) (in, after string) {
	_ = q.Replace([]any{kit.Pod("", "a"), kit.Pod("", "b")}, "5")
	var answer <-chan bool
	for i := 1; i <= pops; i++ {
		_, _ = q.Pop(func(any, bool) error {
			if i == pops {
				answer = ask(q)
				select {
				case v := <-answer:
					in = fmt.Sprintf("%v at once", v)
				case <-time.After(time.Second):
				}
			}
			return nil
		})
	}
	if in == "" {
		in = fmt.Sprintf("%v after the process call", <-answer)
	}
	select {
	case v := <-ask(q):
		after = fmt.Sprintf("%v at once", v)
	case <-time.After(time.Second):
		after = "blocked"
	}
	return in, after
}

func TestPredictions(t *testing.T) {
	realIn, realAfter := during(deltafifo.NewRealFIFOWithOptions(deltafifo.RealFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc, AtomicEvents: true, UnlockWhileProcessing: true}), 1)
	deltaIn, _ := during(deltafifo.NewDeltaFIFOWithOptions(deltafifo.DeltaFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc}), 2)
	for _, you := range []string{RealDuring, RealAfter, DeltaDuring} {
		v, when, _ := strings.Cut(you, " ")
		if v != "true" && v != "false" || when != "at once" && when != "after the process call" {
			t.Fatalf("%q is not written \"VALUE WHEN\": true or false, then \"at once\" or \"after the process call\"", you)
		}
	}
	// One message for the three: which one is wrong would leave a choice
	// of four values to try.
	if RealDuring != realIn || RealAfter != realAfter || DeltaDuring != deltaIn {
		t.Errorf("your three answers are not what HasSynced did: for each queue, is its lock held while the process function runs (then the call waits), and when does the count of initial entries drop, before or after the process call?")
	}
}
