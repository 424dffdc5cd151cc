package lister_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	lister "github.com/informer-anatomy/informer-anatomy/chapters/02-lister"
)

// cacheWithPods is what an informer would have built by the time it synced.
func cacheWithPods() store.Indexer {
	cache := store.NewIndexer(store.MetaNamespaceKeyFunc, store.Indexers{
		store.NamespaceIndex: store.MetaNamespaceIndexFunc,
	})
	for _, p := range []struct{ ns, name, app string }{
		{"default", "web-1", "web"}, {"default", "web-2", "web"}, {"default", "db-1", "db"}, {"shop", "web-1", "web"},
	} {
		_ = cache.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: p.ns, Name: p.name, Labels: map[string]string{"app": p.app},
		}})
	}
	return cache
}

// A controller's typical read: the pods of one namespace that match a
// selector, straight from the cache, with no request to the API server.
func ExampleNewPodLister() {
	pods := lister.NewPodLister(cacheWithPods())

	web, _ := labels.Parse("app=web")
	inDefault, _ := pods.Pods("default").List(web)
	everywhere, _ := pods.List(web)
	fmt.Println(len(inDefault), len(everywhere))

	_, err := pods.Pods("default").Get("web-9")
	fmt.Println(apierrors.IsNotFound(err), err)
	// Output:
	// 2 3
	// true pod "web-9" not found
}

// ListAllByNamespace uses the namespace index; labels.Everything() skips
// reading labels entirely.
func ExampleListAllByNamespace() {
	var names []string
	_ = lister.ListAllByNamespace(cacheWithPods(), "shop", labels.Everything(), func(obj any) {
		names = append(names, obj.(*corev1.Pod).Name)
	})
	fmt.Println(names)
	// Output:
	// [web-1]
}

// A GenericLister serves any type as runtime.Object; chapter 6's
// ForResource hands these out.
func ExampleNewGenericLister() {
	l := lister.NewGenericLister(cacheWithPods(), corev1.Resource("pods"))
	obj, _ := l.ByNamespace("default").Get("db-1")
	fmt.Println(obj.(*corev1.Pod).Labels["app"])
	// Output:
	// db
}
