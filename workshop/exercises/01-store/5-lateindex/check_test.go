//go:build workshop

package lateindex

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func byApp(obj any) ([]string, error)  { return []string{obj.(*corev1.Pod).Labels["app"]}, nil }
func byTier(obj any) ([]string, error) { return []string{obj.(*corev1.Pod).Labels["tier"]}, nil }

// The messages say which part of the reasoning went wrong, not which
// prediction: each count alone would be found by trying a few numbers.
func TestPredictions(t *testing.T) {
	ours := store.NewIndexer(store.MetaNamespaceKeyFunc, store.Indexers{})
	theirs := kcache.NewIndexer(kcache.MetaNamespaceKeyFunc, kcache.Indexers{})
	type indexer interface {
		Add(any) error
		ByIndex(string, string) ([]any, error)
	}
	for _, s := range []struct {
		name       string
		idx        indexer
		add, twice func() error
		names      func() []string
	}{
		{"chapter 1's store", ours,
			func() error { return ours.AddIndexers(store.Indexers{"byApp": byApp}) },
			func() error { return ours.AddIndexers(store.Indexers{"byApp": byApp, "byTier": byTier}) },
			func() []string { return keys(ours.GetIndexers()) }},
		{"client-go's store", theirs,
			func() error { return theirs.AddIndexers(kcache.Indexers{"byApp": byApp}) },
			func() error { return theirs.AddIndexers(kcache.Indexers{"byApp": byApp, "byTier": byTier}) },
			func() []string { return keys(theirs.GetIndexers()) }},
	} {
		for i, app := range []string{"web", "db", "web", "web", "db"} {
			_ = s.idx.Add(kit.Pod("", string(rune('a'+i)), kit.WithLabels("app", app, "tier", "t")))
		}
		if err := s.add(); err != nil {
			t.Fatalf("%s: first AddIndexers: %v", s.name, err)
		}
		web, _ := s.idx.ByIndex("byApp", "web")
		if len(web) != WebPods {
			t.Errorf("with %s, your count right after the first AddIndexers is not what ByIndex returns: what does AddIndexers do with the objects already stored?", s.name)
		}
		_ = s.twice()
		web, _ = s.idx.ByIndex("byApp", "web")
		if got := s.names(); !slices.Equal(got, Indexes) || len(web) != StillWebPods {
			t.Errorf("with %s, your picture of the store after the second AddIndexers (its indexes, or what byApp answers) is not what happened: what does AddIndexers do when one of the names it is given is taken, and to which of the indexes it is given?", s.name)
		}
	}
}

func keys[M ~map[string]V, V any](m M) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
