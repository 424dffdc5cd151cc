package lister

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
)

// ResourceIndexer is a typed, read-only view of an indexer holding objects of
// type T, for all namespaces or for one. Every typed lister in this package is
// a named skin on it.
//
// Why generics: before client-go 0.31 every generated lister repeated the same
// List and Get bodies with a different type assertion; a single generic type
// now holds that logic once and the generated code only names things.
//
// Mirrors [k8s.io/client-go/listers.ResourceIndexer] (listers/generic_helpers.go).
type ResourceIndexer[T runtime.Object] struct {
	indexer  store.Indexer
	resource schema.GroupResource
	// namespace is "" for a view of every namespace (or of a cluster-scoped
	// resource).
	namespace string
}

// New returns a ResourceIndexer over every namespace.
//
// Mirrors [k8s.io/client-go/listers.New] (listers/generic_helpers.go).
func New[T runtime.Object](indexer store.Indexer, resource schema.GroupResource) ResourceIndexer[T] {
	return ResourceIndexer[T]{indexer: indexer, resource: resource}
}

// NewNamespaced narrows parent to one namespace.
//
// Mirrors [k8s.io/client-go/listers.NewNamespaced] (listers/generic_helpers.go).
func NewNamespaced[T runtime.Object](parent ResourceIndexer[T], namespace string) ResourceIndexer[T] {
	parent.namespace = namespace
	return parent
}

// List returns the objects in the view whose labels match selector.
//
// It panics if the cache holds an object that is not a T: that is a
// programming error (a lister over the wrong informer), not bad data.
func (l ResourceIndexer[T]) List(selector labels.Selector) (ret []T, err error) {
	err = ListAllByNamespace(l.indexer, l.namespace, selector, func(obj any) {
		ret = append(ret, obj.(T))
	})
	return ret, err
}

// Get returns the object called name in the view's namespace (or the
// cluster-scoped object called name), or a NotFound error for the resource.
func (l ResourceIndexer[T]) Get(name string) (T, error) {
	key := name
	if l.namespace != "" {
		key = l.namespace + "/" + name
	}
	obj, exists, err := l.indexer.GetByKey(key)
	if err != nil {
		var zero T
		return zero, err
	}
	if !exists {
		var zero T
		return zero, notFound(l.resource, name)
	}
	return obj.(T), nil
}
