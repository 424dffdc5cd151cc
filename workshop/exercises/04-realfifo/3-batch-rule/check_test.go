//go:build workshop

package batchrule

import (
	"math/rand/v2"
	"testing"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func e(t deltafifo.DeltaType, key string) Entry { return Entry{t, key} }

func TestTable(t *testing.T) {
	kit.Returns(t, "BatchLen", func() { checkTable(t) })
}

func checkTable(t *testing.T) {
	A, U, D := deltafifo.Added, deltafifo.Updated, deltafifo.Deleted
	for _, c := range []struct {
		name    string
		queued  []Entry
		initial int
		want    int
	}{
		{"one entry", []Entry{e(A, "a")}, 0, 1},
		{"distinct keys", []Entry{e(A, "a"), e(A, "b"), e(U, "c")}, 0, 3},
		{"second state of a key", []Entry{e(A, "a"), e(A, "b"), e(U, "a"), e(A, "c")}, 0, 2},
		{"a ReplacedAll in the middle", []Entry{e(A, "a"), e(deltafifo.ReplacedAll, ""), e(A, "b")}, 0, 1},
		{"a Bookmark at the front", []Entry{e(deltafifo.Bookmark, ""), e(A, "a")}, 0, 1},
		{"a SyncAll after two", []Entry{e(A, "a"), e(D, "b"), e(deltafifo.SyncAll, "")}, 0, 2},
		{"end of the initial list", []Entry{e(A, "a"), e(A, "b"), e(A, "c"), e(A, "d")}, 2, 2},
		{"Replaced and Sync are batchable", []Entry{e(deltafifo.Replaced, "a"), e(deltafifo.Sync, "b")}, 0, 2},
	} {
		if got := BatchLen(c.queued, c.initial); got != c.want {
			// The expected length is not printed: it would answer
			// 04-realfifo/4-popbatch, which asks for batch sizes.
			t.Errorf("%s: BatchLen(%v, initialLeft %d) = %d, not the RealFIFO's batch rule for this case; read RealFIFO.PopBatch", c.name, c.queued, c.initial, got)
		}
	}
	many := make([]Entry, 1500)
	for i := range many {
		many[i] = e(A, string(rune(0x4e00+i)))
	}
	if got := BatchLen(many, 0); got != BatchSize {
		t.Errorf("1,500 distinct entries: BatchLen = %d, want %d (the batch size)", got, BatchSize)
	}
}

// TestAgainstTheRealFIFO feeds random calls to chapter 4's RealFIFO and
// checks each PopBatch's size against BatchLen over a model of the queue.
func TestAgainstTheRealFIFO(t *testing.T) {
	kit.Returns(t, "BatchLen", func() { checkAgainstTheRealFIFO(t) })
}

func checkAgainstTheRealFIFO(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 1))
	for seq := range 200 {
		q := deltafifo.NewRealFIFOWithOptions(deltafifo.RealFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc, AtomicEvents: true, EmitDeltaTypeBookmark: true})
		_ = q.Replace(nil, "1") // the initial list, popped first
		_ = q.PopBatch(func([]deltafifo.Delta, bool) error { return nil }, func(any, bool) error { return nil })
		var model []Entry
		for range rng.IntN(12) + 1 {
			key := string(rune('a' + rng.IntN(4)))
			switch rng.IntN(8) {
			case 0, 1, 2:
				_ = q.Add(kit.Pod("", key))
				model = append(model, e(deltafifo.Added, "default/"+key))
			case 3, 4:
				_ = q.Update(kit.Pod("", key))
				model = append(model, e(deltafifo.Updated, "default/"+key))
			case 5:
				_ = q.Delete(kit.Pod("", key))
				model = append(model, e(deltafifo.Deleted, "default/"+key))
			case 6:
				_ = q.Bookmark("5")
				model = append(model, e(deltafifo.Bookmark, ""))
			case 7:
				_ = q.Replace([]any{kit.Pod("", key)}, "6")
				model = append(model, e(deltafifo.ReplacedAll, ""))
			}
		}
		for len(model) > 0 {
			got := 0
			err := q.PopBatch(func(ds []deltafifo.Delta, _ bool) error { got = len(ds); return nil },
				func(any, bool) error { got = 1; return nil })
			if err != nil {
				t.Fatal(err)
			}
			if want := BatchLen(model, 0); want != got {
				t.Fatalf("sequence %d: queued %v: BatchLen says %d, not what the RealFIFO's PopBatch took", seq, model, want)
			}
			model = model[got:]
		}
	}
}
