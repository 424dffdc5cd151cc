//go:build workshop

package fallback

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	lister "github.com/informer-anatomy/informer-anatomy/chapters/02-lister"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

// counting hands out the objects of an indexer and counts them.
type counting struct {
	store.Indexer
	read int
}

func (c *counting) List() []any { l := c.Indexer.List(); c.read += len(l); return l }
func (c *counting) Index(name string, obj any) ([]any, error) {
	l, err := c.Indexer.Index(name, obj)
	c.read += len(l)
	return l, err
}

// countingSelector counts Matches calls.
type countingSelector struct {
	labels.Selector
	matches int
}

func (s *countingSelector) Matches(l labels.Labels) bool { s.matches++; return s.Selector.Matches(l) }

func measure(t *testing.T, indexers store.Indexers) (read, matches, found int) {
	idx := &counting{Indexer: store.NewIndexer(store.MetaNamespaceKeyFunc, indexers)}
	for ns := range 10 {
		for i := range 100 {
			app := "web"
			if i%2 == 1 {
				app = "db"
			}
			_ = idx.Add(kit.Pod(fmt.Sprintf("ns-%d", ns), fmt.Sprintf("p-%d", i), kit.WithLabels("app", app)))
		}
	}
	sel := &countingSelector{Selector: labels.SelectorFromSet(labels.Set{"app": "web"})}
	if err := lister.ListAllByNamespace(idx, "ns-3", sel, func(any) { found++ }); err != nil {
		t.Fatal(err)
	}
	return idx.read, sel.matches, found
}

func TestFindings(t *testing.T) {
	rw, mw, fw := measure(t, store.Indexers{store.NamespaceIndex: store.MetaNamespaceIndexFunc})
	ro, mo, fo := measure(t, store.Indexers{})
	if fw != 50 || fo != 50 {
		t.Fatalf("both must find the 50 web pods of ns-3: with index %d, without %d", fw, fo)
	}
	for _, c := range []struct {
		name       string
		you, truth int
	}{
		{"ObjectsReadWithIndex", ObjectsReadWithIndex, rw},
		{"ObjectsReadWithoutIndex", ObjectsReadWithoutIndex, ro},
		{"MatchesWithIndex", MatchesWithIndex, mw},
		{"MatchesWithoutIndex", MatchesWithoutIndex, mo},
	} {
		if c.you != c.truth {
			t.Errorf("%s: you wrote %d, not what the checker measured (measure it yourself: wrap the indexer and the selector in counting types)", c.name, c.you)
		}
	}
}
