//go:build workshop

package freshness

import (
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	lister "github.com/informer-anatomy/informer-anatomy/chapters/02-lister"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

type broken struct{}

func (broken) List(labels.Selector) ([]*corev1.ConfigMap, error) {
	return nil, errors.New("cache broken")
}
func (broken) Get(string) (*corev1.ConfigMap, error) { return nil, errors.New("cache broken") }

func TestSeen(t *testing.T) {
	kit.Returns(t, "Seen", func() { checkSeen(t) })
}

func checkSeen(t *testing.T) {
	srv := kit.StartServer(t)
	cache := store.NewIndexer(store.MetaNamespaceKeyFunc, store.Indexers{store.NamespaceIndex: store.MetaNamespaceIndexFunc})
	l := lister.NewConfigMapLister(cache).ConfigMaps("default")
	cm := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}}
	}

	old, err := srv.Create(cm())
	if err != nil {
		t.Fatal(err)
	}
	_ = cache.Add(old) // the informer saw the first one
	if err := srv.Delete(apiserver.ConfigMaps, "default", "settings"); err != nil {
		t.Fatal(err)
	}
	obj, err := srv.Create(cm())
	if err != nil {
		t.Fatal(err)
	}
	created := obj.(*corev1.ConfigMap)

	if ok, err := Seen(l, created); ok || err != nil {
		t.Errorf("the cache still holds the deleted ConfigMap of the same name (another UID): want false, nil; got %v, %v", ok, err)
	}
	_ = cache.Delete(old)
	if ok, err := Seen(l, created); ok || err != nil {
		t.Errorf("the cache holds no ConfigMap of that name yet: want false, nil (NotFound is not an error here); got %v, %v", ok, err)
	}
	_ = cache.Add(created)
	if ok, err := Seen(l, created); !ok || err != nil {
		t.Errorf("the cache holds the created ConfigMap: want true, nil; got %v, %v", ok, err)
	}
	// Updates until the resourceVersion has more digits than the
	// created one's ("10" after "9"): a resourceVersion is opaque, and
	// one compared as a string, or as a number, says nothing about
	// identity.
	updated := created
	for i := 0; len(updated.ResourceVersion) <= len(created.ResourceVersion); i++ {
		later := updated.DeepCopy()
		later.Data = map[string]string{"k": fmt.Sprint(i)}
		obj, err := srv.Update(later)
		if err != nil {
			t.Fatal(err)
		}
		updated = obj.(*corev1.ConfigMap)
	}
	_ = cache.Update(updated)
	if ok, err := Seen(l, created); !ok || err != nil {
		t.Errorf("the cache holds a later state of the created ConfigMap: want true, nil; got %v, %v", ok, err)
	}
	// Someone else deletes it and creates another of the same name: a
	// newer object, which is not the one the controller created.
	if err := srv.Delete(apiserver.ConfigMaps, "default", "settings"); err != nil {
		t.Fatal(err)
	}
	obj, err = srv.Create(cm())
	if err != nil {
		t.Fatal(err)
	}
	_ = cache.Delete(updated)
	_ = cache.Add(obj)
	if ok, err := Seen(l, created); ok || err != nil {
		t.Errorf("the created ConfigMap was deleted, and the cache holds a newer one of the same name (another UID, a later resourceVersion): want false, nil; got %v, %v", ok, err)
	}
	if _, err := Seen(broken{}, created); err == nil {
		t.Errorf("a lister that fails with something other than NotFound: want its error returned, got nil")
	}
}
