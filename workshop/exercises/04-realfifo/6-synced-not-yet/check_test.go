//go:build workshop

package syncednotyet

import (
	"fmt"
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

// ask calls q.HasSynced from another goroutine and waits a second for it.
func ask(q queue) string {
	got := make(chan bool, 1)
	go func() { got <- q.HasSynced() }()
	select {
	case v := <-got:
		return fmt.Sprint(v)
	case <-time.After(time.Second):
		return "blocks"
	}
}

// during pops the initial list (pops entries) and asks HasSynced while the
// last one is being processed, then after.
func during(q queue, pops int) (string, string) {
	_ = q.Replace([]any{kit.Pod("", "a"), kit.Pod("", "b")}, "5")
	var in string
	for i := 1; i <= pops; i++ {
		_, _ = q.Pop(func(any, bool) error {
			if i == pops {
				in = ask(q)
			}
			return nil
		})
	}
	return in, ask(q)
}

func TestPredictions(t *testing.T) {
	realIn, realAfter := during(deltafifo.NewRealFIFOWithOptions(deltafifo.RealFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc, AtomicEvents: true, UnlockWhileProcessing: true}), 1)
	deltaIn, _ := during(deltafifo.NewDeltaFIFOWithOptions(deltafifo.DeltaFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc}), 2)
	for _, c := range []struct{ name, you, got string }{
		{"RealDuring", RealDuring, realIn}, {"RealAfter", RealAfter, realAfter}, {"DeltaDuring", DeltaDuring, deltaIn},
	} {
		switch {
		case c.you != "true" && c.you != "false" && c.you != "blocks":
			t.Errorf("%s: you predicted %q; write one of the three answers the doc comment names", c.name, c.you)
		case c.you != c.got:
			t.Errorf("%s: you predicted %q, not what HasSynced did", c.name, c.you)
		}
	}
}
