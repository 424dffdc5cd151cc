//go:build workshop

package replace

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestPredictions(t *testing.T) {
	ours := store.NewStore(store.MetaNamespaceKeyFunc)
	theirs := kcache.NewStore(kcache.MetaNamespaceKeyFunc)
	for _, s := range []kcache.Store{ours, theirs} {
		for _, p := range []*corev1.Pod{kit.Pod("", "a", kit.WithRV("1")), kit.Pod("", "b", kit.WithRV("2")), kit.Pod("", "c", kit.WithRV("3"))} {
			_ = s.Add(p)
		}
		_ = s.Replace([]any{kit.Pod("", "b", kit.WithRV("4")), kit.Pod("", "d", kit.WithRV("5"))}, "10")
	}
	for name, s := range map[string]kcache.Store{"chapter 1's store": ours, "client-go's store": theirs} {
		keys := s.ListKeys()
		slices.Sort(keys)
		if d := kit.DiffList(Keys, keys); d != "" {
			t.Errorf("Keys: you predicted %q, not the keys %s holds (sorted): %s", Keys, name, d)
		}
		b, _, _ := s.GetByKey("default/b")
		if b == nil || b.(*corev1.Pod).ResourceVersion != RVOfB {
			t.Errorf("RVOfB: you predicted %q, not the resourceVersion of the b that %s holds", RVOfB, name)
		}
	}
	if got := ours.LastStoreSyncResourceVersion(); got != LastSync {
		t.Errorf("LastSync: you predicted %q, not what chapter 1's store says", LastSync)
	}
}
