//go:build workshop

package bynode

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

// indexer is what both caches offer for this check.
type indexer interface {
	Add(obj any) error
	Update(obj any) error
	IndexKeys(indexName, indexedValue string) ([]string, error)
	ListIndexFuncValues(indexName string) []string
}

func TestByNode(t *testing.T) {
	kit.Returns(t, "ByNode (called by the check and by both indexers)", func() { checkByNode(t) })
}

func checkByNode(t *testing.T) {
	// The error must name the type it got, whatever that is: a fixed
	// text that happens to hold one type's name is not enough.
types:
	for _, c := range []struct {
		obj        any
		call, name string
	}{{"not a pod", `ByNode("not a pod")`, "string"}, {42, "ByNode(42)", "int"}, {&corev1.ConfigMap{}, "ByNode(&corev1.ConfigMap{})", "ConfigMap"}} {
		_, err := ByNode(c.obj)
		switch {
		case err == nil:
			t.Errorf("%s returned no error: an index function must refuse what is not a pod", c.call)
			break types // once is enough
		case !strings.Contains(err.Error(), c.name):
			t.Errorf("%s returned the error %q, which does not name the type it got: the task asks for an error that does (fmt's %%T)", c.call, err)
		}
	}
	ours := store.NewIndexer(store.MetaNamespaceKeyFunc, store.Indexers{"byNode": ByNode})
	theirs := kcache.NewIndexer(kcache.MetaNamespaceKeyFunc, kcache.Indexers{"byNode": ByNode})
	for _, c := range []struct {
		name string
		idx  indexer
	}{{"chapter 1's indexer", ours}, {"client-go's indexer", theirs}} {
		idx := c.idx
		for _, p := range []struct{ name, node string }{{"a", "n1"}, {"b", "n1"}, {"c", "n2"}, {"d", "n2"}, {"e", "n3"}, {"pending", ""}} {
			if err := idx.Add(kit.Pod("", p.name, kit.OnNode(p.node))); err != nil {
				t.Fatalf("%s: Add: %v", c.name, err)
			}
		}
		if err := idx.Update(kit.Pod("", "e", kit.OnNode("n1"))); err != nil {
			t.Fatalf("%s: Update: %v", c.name, err)
		}
		keys, err := idx.IndexKeys("byNode", "n1")
		slices.Sort(keys)
		if want := []string{"default/a", "default/b", "default/e"}; err != nil || !slices.Equal(keys, want) {
			t.Errorf("%s: IndexKeys(byNode, n1) after moving e from n3 to n1: want %q, got %q (err %v)", c.name, want, keys, err)
		}
		values := idx.ListIndexFuncValues("byNode")
		slices.Sort(values)
		if want := []string{"n1", "n2"}; !slices.Equal(values, want) {
			t.Errorf("%s: ListIndexFuncValues(byNode): want %q, got %q\n  n3 has no pods left, so it must be gone; an unscheduled pod must not create \"\"", c.name, want, values)
		}
	}
}
