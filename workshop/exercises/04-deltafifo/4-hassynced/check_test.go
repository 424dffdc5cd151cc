//go:build workshop

package hassynced

import (
	"slices"
	"testing"

	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

type queue interface {
	Add(any) error
	Replace([]any, string) error
	HasSynced() bool
}

func measure(q queue, pop func(func(initial bool))) (synced int, flags []bool) {
	_ = q.Replace([]any{kit.Pod("", "a"), kit.Pod("", "b"), kit.Pod("", "c")}, "10")
	_ = q.Add(kit.Pod("", "d"))
	synced = -1
	if q.HasSynced() {
		synced = 0
	}
	for i := 1; i <= 4; i++ {
		pop(func(initial bool) { flags = append(flags, initial) })
		if synced < 0 && q.HasSynced() {
			synced = i
		}
	}
	return synced, flags
}

func TestPredictions(t *testing.T) {
	ours := deltafifo.NewDeltaFIFOWithOptions(deltafifo.DeltaFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc})
	theirs := kcache.NewDeltaFIFOWithOptions(kcache.DeltaFIFOOptions{KeyFunction: kcache.MetaNamespaceKeyFunc})
	s1, f1 := measure(ours, func(f func(bool)) {
		_, _ = ours.Pop(func(_ any, initial bool) error { f(initial); return nil })
	})
	s2, f2 := measure(theirs, func(f func(bool)) {
		_, _ = theirs.Pop(func(_ any, initial bool) error { f(initial); return nil })
	})
	// One message for both: apart, 5 counts and 16 flag lists could be
	// tried one after the other, and a per-pop diff would say which flag
	// to flip.
	if s1 != SyncedAfterPops || !slices.Equal(Initial, f1) {
		t.Errorf("your predictions (SyncedAfterPops %d, Initial %v) are not what chapter 4's DeltaFIFO does: which items does HasSynced wait for, and which pops carry them?", SyncedAfterPops, Initial)
	}
	if s2 != s1 || !slices.Equal(f2, f1) {
		// Said only when the two disagree: a bug in chapter 4.
		t.Errorf("client-go's DeltaFIFO does something else than chapter 4's (a bug of chapter 4: please report it)")
	}
}
