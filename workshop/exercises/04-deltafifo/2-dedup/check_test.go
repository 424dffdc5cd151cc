//go:build workshop

package dedup

import (
	"slices"
	"strings"
	"testing"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func d(typ deltafifo.DeltaType, rv string) deltafifo.Delta {
	return deltafifo.Delta{Type: typ, Object: kit.Pod("", "x", kit.WithRV(rv))}
}

func tomb(rv string) deltafifo.Delta {
	return deltafifo.Delta{Type: deltafifo.Deleted, Object: deltafifo.DeletedFinalStateUnknown{Key: "default/x", Obj: kit.Pod("", "x", kit.WithRV(rv))}}
}

func show(ds deltafifo.Deltas) string {
	if len(ds) == 0 {
		return "[]"
	}
	return strings.TrimPrefix(kit.DescribeDeltas(ds), "default/x: ")
}

func TestDedupDeltas(t *testing.T) {
	kit.Returns(t, "DedupDeltas", func() { checkDedupDeltas(t) })
}

func checkDedupDeltas(t *testing.T) {
	// The messages name the case, never the expected deltas: those would
	// answer 04-deltafifo/1-pops, which asks what the queue pops.
	for _, c := range []struct {
		in   deltafifo.Deltas
		want string
		why  string
	}{
		{deltafifo.Deltas{}, "[]", "nothing to deduplicate"},
		{deltafifo.Deltas{d(deltafifo.Added, "1")}, "Added@1", "a single delta"},
		{deltafifo.Deltas{d(deltafifo.Added, "1"), d(deltafifo.Deleted, "2")}, "Added@1 Deleted@2", "only two deletions in a row are duplicates"},
		{deltafifo.Deltas{d(deltafifo.Updated, "1"), d(deltafifo.Updated, "2")}, "Updated@1 Updated@2", "only deletions are ever merged"},
		{deltafifo.Deltas{d(deltafifo.Deleted, "4"), d(deltafifo.Deleted, "5")}, "Deleted@4", "two real deletions: which one does client-go keep?"},
		{deltafifo.Deltas{d(deltafifo.Added, "1"), d(deltafifo.Deleted, "4"), d(deltafifo.Deleted, "5")}, "Added@1 Deleted@4", "only the last two deltas are compared; the rest stays"},
		{deltafifo.Deltas{d(deltafifo.Deleted, "4"), tomb("3")}, "Deleted@4", "a real deletion, then a tombstone"},
		{deltafifo.Deltas{tomb("3"), d(deltafifo.Deleted, "5")}, "Deleted@5", "a tombstone, then a real deletion: which carries the better information?"},
		{deltafifo.Deltas{tomb("3"), tomb("4")}, "Deleted@tombstone(4)", "two tombstones"},
		{deltafifo.Deltas{d(deltafifo.Deleted, "1"), d(deltafifo.Added, "2"), d(deltafifo.Deleted, "3")}, "Deleted@1 Added@2 Deleted@3", "deletions that are not the last two deltas"},
	} {
		in := show(c.in)
		if got := show(DedupDeltas(slices.Clone(c.in))); got != c.want {
			t.Errorf("DedupDeltas(%s) = %s, not what client-go's dedupDeltas returns (%s); read DeltaFIFO's dedupDeltas and isDeletionDup", in, got, c.why)
		}
	}

	// The same rule as the queue's, seen from outside.
	q := deltafifo.NewDeltaFIFOWithOptions(deltafifo.DeltaFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc})
	_ = q.Add(kit.Pod("", "x", kit.WithRV("1")))
	_ = q.Delete(kit.Pod("", "x", kit.WithRV("4")))
	_ = q.Delete(kit.Pod("", "x", kit.WithRV("5")))
	var popped deltafifo.Deltas
	_, _ = q.Pop(func(obj any, _ bool) error { popped = obj.(deltafifo.Deltas); return nil })
	mine := DedupDeltas(deltafifo.Deltas{d(deltafifo.Added, "1"), d(deltafifo.Deleted, "4"), d(deltafifo.Deleted, "5")})
	if show(mine) != show(popped) {
		t.Errorf("Add@1 Delete@4 Delete@5: your DedupDeltas gives %s, not what chapter 4's DeltaFIFO pops", show(mine))
	}
}
