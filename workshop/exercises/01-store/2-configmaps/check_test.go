//go:build workshop

package configmaps

import (
	"slices"
	"testing"

	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestByConfigMap(t *testing.T) {
	kit.Returns(t, "ByConfigMap (called by the check and by both indexers)", func() { checkByConfigMap(t) })
}

func checkByConfigMap(t *testing.T) {
	if _, err := ByConfigMap(42); err == nil {
		t.Errorf("ByConfigMap(42) returned no error: refuse what is not a pod")
	}
	got, err := ByConfigMap(kit.Pod("", "p", kit.MountingConfigMaps("b", "a", "b")))
	if want := []string{"b", "a"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("a pod mounting b, a, b: want %q (each name once, volume order), got %q (err %v)", want, got, err)
	}
	got, err = ByConfigMap(kit.Pod("", "plain"))
	if err != nil || len(got) != 0 {
		t.Errorf("a pod mounting no ConfigMap: want no values, got %q (err %v)", got, err)
	}

	pods := []any{
		kit.Pod("", "web", kit.MountingConfigMaps("site", "tls")),
		kit.Pod("", "api", kit.MountingConfigMaps("tls")),
		kit.Pod("", "plain"),
	}
	ours := store.NewIndexer(store.MetaNamespaceKeyFunc, store.Indexers{"byConfigMap": ByConfigMap})
	theirs := kcache.NewIndexer(kcache.MetaNamespaceKeyFunc, kcache.Indexers{"byConfigMap": ByConfigMap})
	for _, p := range pods {
		_ = ours.Add(p)
		_ = theirs.Add(p)
	}
	for name, idx := range map[string]interface {
		IndexKeys(string, string) ([]string, error)
		ListIndexFuncValues(string) []string
	}{"chapter 1's indexer": ours, "client-go's indexer": theirs} {
		keys, _ := idx.IndexKeys("byConfigMap", "tls")
		slices.Sort(keys)
		if want := []string{"default/api", "default/web"}; !slices.Equal(keys, want) {
			t.Errorf("%s: pods mounting tls: want %q, got %q", name, want, keys)
		}
		values := idx.ListIndexFuncValues("byConfigMap")
		slices.Sort(values)
		if want := []string{"site", "tls"}; !slices.Equal(values, want) {
			t.Errorf("%s: ListIndexFuncValues: want %q, got %q (a pod that mounts nothing must not add \"\")", name, want, values)
		}
	}
}
