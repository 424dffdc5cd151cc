package lister

import (
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
)

// AppendFunc receives each object a list call selects.
//
// Mirrors [k8s.io/client-go/tools/cache.AppendFunc] (listers.go).
type AppendFunc func(any)

// ListAll calls appendFn for every object in s whose labels match selector.
//
// [labels.Everything] is the fast path: objects are appended without reading
// their labels at all. A selector that matches nothing returns at once. An
// object without metadata is an error, returned after the objects before it
// have been appended (the order of a store's List is unspecified, so callers
// must not rely on which those are).
//
// Mirrors [k8s.io/client-go/tools/cache.ListAll] (listers.go).
func ListAll(s store.Store, selector labels.Selector, appendFn AppendFunc) error {
	if labels.MatchesNothing(selector) {
		return nil
	}
	return appendMatching(s.List(), selector, appendFn)
}

// ListAllByNamespace is [ListAll] restricted to one namespace.
// [metav1.NamespaceAll] ("") means every namespace.
//
// It reads the [store.NamespaceIndex] so the cost is the size of the namespace,
// not of the cache. An indexer without that index still gives the right answer
// by scanning every object; that is slow for a big cache, so give informers the
// namespace index (the factory of chapter 6 always does).
//
// Mirrors [k8s.io/client-go/tools/cache.ListAllByNamespace] (listers.go); the
// fallback is silent here, where upstream logs a warning through klog.
func ListAllByNamespace(indexer store.Indexer, namespace string, selector labels.Selector, appendFn AppendFunc) error {
	if labels.MatchesNothing(selector) {
		return nil
	}
	if namespace == metav1.NamespaceAll {
		return ListAll(indexer, selector, appendFn)
	}
	inNamespace, err := indexer.Index(store.NamespaceIndex, &metav1.ObjectMeta{Namespace: namespace})
	if err == nil {
		return appendMatching(inNamespace, selector, appendFn)
	}
	// No namespace index: scan. Every object's metadata is read here, even
	// for Everything, because the namespace has to be checked anyway.
	for _, obj := range indexer.List() {
		m, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		if m.GetNamespace() == namespace && selector.Matches(labels.Set(m.GetLabels())) {
			appendFn(obj)
		}
	}
	return nil
}

// appendMatching is the loop ListAll and the indexed ListAllByNamespace share.
func appendMatching(objs []any, selector labels.Selector, appendFn AppendFunc) error {
	if selector.Empty() {
		for _, obj := range objs {
			appendFn(obj)
		}
		return nil
	}
	for _, obj := range objs {
		m, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		if selector.Matches(labels.Set(m.GetLabels())) {
			appendFn(obj)
		}
	}
	return nil
}

// GenericLister lists objects of any type as [runtime.Object]: what
// a SharedInformerFactory's ForResource (chapter 6) hands out for resources it
// has no typed lister for.
//
// Mirrors [k8s.io/client-go/tools/cache.GenericLister] (listers.go).
type GenericLister interface {
	// List returns the matching objects of every namespace.
	List(selector labels.Selector) ([]runtime.Object, error)
	// Get looks name up as a store key: right for cluster-scoped objects;
	// namespaced ones need ByNamespace(ns).Get(name).
	Get(name string) (runtime.Object, error)
	// ByNamespace narrows the lister to one namespace.
	ByNamespace(namespace string) GenericNamespaceLister
}

// GenericNamespaceLister is a [GenericLister] for one namespace.
//
// Mirrors [k8s.io/client-go/tools/cache.GenericNamespaceLister] (listers.go).
type GenericNamespaceLister interface {
	List(selector labels.Selector) ([]runtime.Object, error)
	Get(name string) (runtime.Object, error)
}

// NewGenericLister returns a GenericLister over indexer; resource names the
// resource in NotFound errors.
//
// Mirrors [k8s.io/client-go/tools/cache.NewGenericLister] (listers.go).
func NewGenericLister(indexer store.Indexer, resource schema.GroupResource) GenericLister {
	return genericLister{New[runtime.Object](indexer, resource)}
}

// genericLister is ResourceIndexer over runtime.Object plus ByNamespace. Upstream
// has two hand-written structs; the generic type already does both jobs.
type genericLister struct {
	ResourceIndexer[runtime.Object]
}

func (l genericLister) ByNamespace(namespace string) GenericNamespaceLister {
	return genericNamespaceLister{NewNamespaced(l.ResourceIndexer, namespace)}
}

// genericNamespaceLister differs from ResourceIndexer in one place, kept for
// fidelity: Get always looks up "namespace/name", so ByNamespace("").Get(x)
// looks for the key "/x" and finds nothing, even when a cluster-scoped x is
// stored. Upstream's genericNamespaceLister.Get does the same; it is meant for
// namespaced resources only. Use GenericLister.Get for cluster-scoped ones.
type genericNamespaceLister struct {
	ResourceIndexer[runtime.Object]
}

func (l genericNamespaceLister) Get(name string) (runtime.Object, error) {
	obj, exists, err := l.indexer.GetByKey(l.namespace + "/" + name)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, notFound(l.resource, name)
	}
	return obj.(runtime.Object), nil
}

// notFound is the error every Get returns for a missing object: the same
// apimachinery StatusError the API server would send, so callers can test it
// with [errors.IsNotFound] whether the answer came from a lister or a client.
func notFound(resource schema.GroupResource, name string) error {
	return errors.NewNotFound(resource, name)
}
