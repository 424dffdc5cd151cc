//go:build workshop

package popbatch

import (
	"errors"
	"testing"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestPredictions(t *testing.T) {
	q := deltafifo.NewRealFIFOWithOptions(deltafifo.RealFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc, AtomicEvents: true, EmitDeltaTypeBookmark: true})
	_ = q.Replace([]any{kit.Pod("", "a"), kit.Pod("", "b")}, "5")
	_ = q.Add(kit.Pod("", "c"))
	_ = q.Add(kit.Pod("", "d"))
	_ = q.Update(kit.Pod("", "c"))
	_ = q.Add(kit.Pod("", "e"))
	_ = q.Bookmark("9")
	_ = q.Add(kit.Pod("", "f"))
	q.Close()
	var sizes []int
	var initial []bool
	for {
		err := q.PopBatch(func(ds []deltafifo.Delta, init bool) error {
			sizes, initial = append(sizes, len(ds)), append(initial, init)
			return nil
		}, func(_ any, init bool) error {
			sizes, initial = append(sizes, 1), append(initial, init)
			return nil
		})
		if errors.Is(err, deltafifo.ErrFIFOClosed) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if d := kit.DiffList(Sizes, sizes); d != "" {
		t.Errorf("Sizes: you predicted %v, not the sizes of PopBatch's pops: %s", Sizes, d)
	}
	if d := kit.DiffList(Initial, initial); d != "" {
		t.Errorf("Initial: you predicted %v, not what PopBatch passed as isInInitialList: %s", Initial, d)
	}
}
