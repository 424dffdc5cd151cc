//go:build workshop

package tombstone

import (
	"strings"
	"testing"

	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func ours(update bool) string {
	known := store.NewStore(store.MetaNamespaceKeyFunc)
	_ = known.Add(kit.Pod("", "x", kit.WithRV("5")))
	q := deltafifo.NewDeltaFIFOWithOptions(deltafifo.DeltaFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc, KnownObjects: known})
	if update {
		_ = q.Update(kit.Pod("", "x", kit.WithRV("9")))
	}
	_ = q.Replace(nil, "20")
	return strings.Join(kit.Drain(q), " | ")
}

func theirs(update bool) string {
	known := kcache.NewStore(kcache.MetaNamespaceKeyFunc)
	_ = known.Add(kit.Pod("", "x", kit.WithRV("5")))
	q := kcache.NewDeltaFIFOWithOptions(kcache.DeltaFIFOOptions{KeyFunction: kcache.MetaNamespaceKeyFunc, KnownObjects: known})
	if update {
		_ = q.Update(kit.Pod("", "x", kit.WithRV("9")))
	}
	_ = q.Replace(nil, "20")
	return strings.Join(kit.DrainClientGo(q), " | ")
}

func TestPredictions(t *testing.T) {
	for _, c := range []struct {
		name, you string
		update    bool
	}{{"Plain", Plain, false}, {"AfterUpdate", AfterUpdate, true}} {
		got := ours(c.update)
		switch {
		case kit.NamesOff([]string{c.you}, []string{got}):
			t.Errorf("%s: you predicted %q: its deltas are what the queue pops, but not the key it files x under: the task gives x's namespace, and kit.DescribeDeltas starts with the key as MetaNamespaceKeyFunc writes it", c.name, c.you)
		case got != c.you:
			t.Errorf("%s: you predicted %q, not what chapter 4's DeltaFIFO pops", c.name, c.you)
		}
		if theirs(c.update) != got {
			// Said only when the two disagree: a bug in chapter 4.
			t.Errorf("%s: client-go's DeltaFIFO pops something else than chapter 4's (a bug of chapter 4: please report it)", c.name)
		}
	}
}
