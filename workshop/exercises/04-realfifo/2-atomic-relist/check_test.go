//go:build workshop

package atomicrelist

import (
	"context"
	"errors"
	"fmt"
	"testing"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestPredictions(t *testing.T) {
	cache := store.NewStore(deltafifo.DeletionHandlingMetaNamespaceKeyFunc)
	_ = cache.Add(kit.Pod("", "a", kit.WithRV("1")))
	_ = cache.Add(kit.Pod("", "b", kit.WithRV("2")))
	var calls []string
	c := &deltafifo.Consumer{Store: cache, Handler: func(_ context.Context, d deltafifo.Delta, old any, _ bool) {
		key, _ := deltafifo.DeletionHandlingMetaNamespaceKeyFunc(d.Object)
		switch {
		case d.Type == deltafifo.Deleted:
			if _, ok := d.Object.(deltafifo.DeletedFinalStateUnknown); ok {
				calls = append(calls, fmt.Sprintf("delete %s (tombstone)", key))
			} else {
				calls = append(calls, "delete "+key)
			}
		case old == nil:
			calls = append(calls, "add "+key)
		default:
			calls = append(calls, "update "+key)
		}
	}}
	q := deltafifo.NewRealFIFOWithOptions(deltafifo.RealFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc, AtomicEvents: true})
	if err := q.Replace([]any{kit.Pod("", "b", kit.WithRV("3")), kit.Pod("", "c", kit.WithRV("4"))}, "10"); err != nil {
		t.Fatal(err)
	}
	q.Close()
	pops := 0
	for {
		_, err := q.Pop(func(obj any, initial bool) error { return c.ProcessDeltas(obj.(deltafifo.Deltas), initial) })
		if errors.Is(err, deltafifo.ErrFIFOClosed) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		pops++
	}
	if pops != Pops {
		t.Errorf("Pops: you predicted %d, not the number of pops the RealFIFO needed", Pops)
	}
	if kit.NamesOff(Calls, calls) {
		t.Errorf("Calls: you predicted %q: these are the handler's calls, but its keys are not written as the handler writes them (the task gives the pods' namespace; a key is MetaNamespaceKeyFunc's)", Calls)
	} else if d := kit.DiffList(Calls, calls); d != "" {
		t.Errorf("Calls: you predicted %q, not the calls the handler got: %s", Calls, d)
	}
}
