package store

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Indexer is a [Store] that also answers "which objects have this index
// value?". The informer's cache (GetIndexer in chapter 5) is one.
//
// Mirrors [k8s.io/client-go/tools/cache.Indexer] (index.go).
type Indexer interface {
	Store
	// Index returns the stored objects that share at least one value of the
	// named index with obj (obj itself need not be stored).
	Index(indexName string, obj any) ([]any, error)
	// IndexKeys returns, sorted, the keys of the stored objects whose values
	// for the named index include indexedValue.
	IndexKeys(indexName, indexedValue string) ([]string, error)
	// ListIndexFuncValues returns every value the named index currently holds
	// at least one key for. An unknown index name gives an empty list.
	ListIndexFuncValues(indexName string) []string
	// ByIndex returns the stored objects whose values for the named index
	// include indexedValue.
	ByIndex(indexName, indexedValue string) ([]any, error)
	// GetIndexers returns the index functions by name.
	GetIndexers() Indexers
	// AddIndexers adds index functions and indexes every object already
	// stored. A name that is already taken is an error and nothing is added.
	AddIndexers(newIndexers Indexers) error
}

// IndexFunc computes the values an object is indexed under. Returning several
// values files the object under each (a pod indexed by the names of all the
// secrets it mounts); returning none leaves it out of that index.
//
// An IndexFunc must not fail for objects that are stored: the store has no way
// to keep its indexes consistent with a half-indexed object, so like upstream it
// panics (see threadSafeMap.updateIndices_locked).
//
// Mirrors [k8s.io/client-go/tools/cache.IndexFunc] (index.go).
type IndexFunc func(obj any) ([]string, error)

// IndexFuncToKeyFuncAdapter turns an index function that always yields exactly
// one value into a [KeyFunc]; zero or several values are an error.
//
// Mirrors [k8s.io/client-go/tools/cache.IndexFuncToKeyFuncAdapter] (index.go).
func IndexFuncToKeyFuncAdapter(indexFunc IndexFunc) KeyFunc {
	return func(obj any) (string, error) {
		values, err := indexFunc(obj)
		if err != nil {
			return "", err
		}
		switch len(values) {
		case 1:
			return values[0], nil
		case 0:
			return "", fmt.Errorf("unexpected empty indexKeys")
		default:
			return "", fmt.Errorf("too many keys: %v", values)
		}
	}
}

// NamespaceIndex is the conventional name of the index by namespace. Namespaced
// listers (chapter 2) look it up by this name and fall back to a full scan when
// it is missing.
//
// Mirrors [k8s.io/client-go/tools/cache.NamespaceIndex] (index.go).
const NamespaceIndex string = "namespace"

// MetaNamespaceIndexFunc indexes an object by its namespace ("" for
// cluster-scoped objects).
//
// Mirrors [k8s.io/client-go/tools/cache.MetaNamespaceIndexFunc] (index.go).
func MetaNamespaceIndexFunc(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return []string{""}, fmt.Errorf("object has no meta: %v", err)
	}
	return []string{m.GetNamespace()}, nil
}

// index is one reverse map: index value → set of store keys.
type index map[string]sets.Set[string]

// Indexers maps an index name to its function.
//
// Mirrors [k8s.io/client-go/tools/cache.Indexers] (index.go).
type Indexers map[string]IndexFunc

// Indices maps an index name to its reverse map. Callers only ever pass an
// empty one to [NewThreadSafeStore]; it is exported because upstream's is.
//
// Mirrors [k8s.io/client-go/tools/cache.Indices] (index.go).
type Indices map[string]index
