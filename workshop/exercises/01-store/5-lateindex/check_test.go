//go:build workshop

package lateindex

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func byApp(obj any) ([]string, error) { return []string{obj.(*corev1.Pod).Labels["app"]}, nil }

func TestPredictions(t *testing.T) {
	ours := store.NewIndexer(store.MetaNamespaceKeyFunc, store.Indexers{})
	theirs := kcache.NewIndexer(kcache.MetaNamespaceKeyFunc, kcache.Indexers{})
	for name, idx := range map[string]interface {
		Add(any) error
		ByIndex(string, string) ([]any, error)
	}{"chapter 1's store": ours, "client-go's store": theirs} {
		for i, app := range []string{"web", "db", "web", "web", "db"} {
			_ = idx.Add(kit.Pod("", string(rune('a'+i)), kit.WithLabels("app", app)))
		}
		var add func() error
		if name == "chapter 1's store" {
			add = func() error { return ours.AddIndexers(store.Indexers{"byApp": byApp}) }
		} else {
			add = func() error { return theirs.AddIndexers(kcache.Indexers{"byApp": byApp}) }
		}
		if err := add(); err != nil {
			t.Fatalf("%s: first AddIndexers: %v", name, err)
		}
		web, _ := idx.ByIndex("byApp", "web")
		if len(web) != WebPods {
			t.Errorf("WebPods: you predicted %d, not what ByIndex returns with %s", WebPods, name)
		}
		err := add()
		if (err != nil) != SecondAddFails {
			t.Errorf("SecondAddFails: you predicted %v, not what the second AddIndexers of %s does", SecondAddFails, name)
		}
		web, _ = idx.ByIndex("byApp", "web")
		if len(web) != StillWebPods {
			t.Errorf("StillWebPods: you predicted %d, not what ByIndex returns with %s", StillWebPods, name)
		}
	}
}
