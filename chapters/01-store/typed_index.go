package store

import "fmt"

// The typed index API of client-go 1.37: index functions written for one
// object type, so a controller need not type-assert inside every one. They
// are adapters over the untyped Indexer; nothing about indexing changes.

// TypedIndexFunc computes index values for an object of type T.
//
// Mirrors [k8s.io/client-go/tools/cache.TypedIndexFunc] (index.go).
type TypedIndexFunc[T any] func(obj T) ([]string, error)

// TypedIndexers maps index names to typed index functions.
//
// Mirrors [k8s.io/client-go/tools/cache.TypedIndexers] (index.go).
type TypedIndexers[T any] map[string]TypedIndexFunc[T]

// TypedIndexer is an Indexer that also answers with, and takes, T.
//
// Mirrors [k8s.io/client-go/tools/cache.TypedIndexer] (index.go).
type TypedIndexer[T any] interface {
	Indexer
	// TypedIndex is Index with a T in and Ts out.
	TypedIndex(indexName string, obj T) ([]T, error)
	// ByTypedIndex is ByIndex with Ts out.
	ByTypedIndex(indexName, indexedValue string) ([]T, error)
	// AddTypedIndexers is AddIndexers for typed index functions.
	AddTypedIndexers(newIndexers TypedIndexers[T]) error
}

// TypedIndexersToIndexers turns typed index functions into untyped ones,
// for SharedIndexInformerOptions.Indexers and the like.
//
// Mirrors [k8s.io/client-go/tools/cache.TypedIndexersToIndexers] (index.go).
func TypedIndexersToIndexers[T any](indexers TypedIndexers[T]) Indexers {
	out := make(Indexers, len(indexers))
	for name, f := range indexers {
		out[name] = TypedIndexerFuncToIndexerFunc(f)
	}
	return out
}

// TypedIndexerFuncToIndexerFunc turns one typed index function into an
// untyped one. An object that is not a T is an error here, where
// upstream's adapter panics on the type assertion: an index function runs
// inside the cache's write, and a panic there would take the informer down
// for one stray object.
//
// Mirrors [k8s.io/client-go/tools/cache.TypedIndexerFuncToIndexerFunc] (index.go).
func TypedIndexerFuncToIndexerFunc[T any](f TypedIndexFunc[T]) IndexFunc {
	return func(obj any) ([]string, error) {
		t, ok := obj.(T)
		if !ok {
			var want T
			return nil, fmt.Errorf("typed index function for %T was given a %T", want, obj)
		}
		return f(t)
	}
}

// NewTypedIndexer gives indexer the typed methods of TypedIndexer[T].
// Ours: upstream's is unexported, reached through
// TypedSharedIndexInformer.GetTypedIndexer.
func NewTypedIndexer[T any](indexer Indexer) TypedIndexer[T] { return typedIndexer[T]{indexer} }

type typedIndexer[T any] struct{ Indexer }

func (x typedIndexer[T]) TypedIndex(indexName string, obj T) ([]T, error) {
	objs, err := x.Index(indexName, obj)
	if err != nil {
		return nil, err
	}
	return asTyped[T](objs)
}

func (x typedIndexer[T]) ByTypedIndex(indexName, indexedValue string) ([]T, error) {
	objs, err := x.ByIndex(indexName, indexedValue)
	if err != nil {
		return nil, err
	}
	return asTyped[T](objs)
}

func (x typedIndexer[T]) AddTypedIndexers(newIndexers TypedIndexers[T]) error {
	return x.AddIndexers(TypedIndexersToIndexers(newIndexers))
}

// asTyped converts a result; a stored object that is not a T (an informer
// given the wrong example object, or a transform that changed the type) is
// an error naming both types, where upstream panics.
func asTyped[T any](objs []any) ([]T, error) {
	out := make([]T, len(objs))
	for i, o := range objs {
		t, ok := o.(T)
		if !ok {
			return nil, fmt.Errorf("typed indexer for %T found a %T in the cache", out[i], o)
		}
		out[i] = t
	}
	return out, nil
}
