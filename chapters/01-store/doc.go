// Package store is chapter 1 of informer-anatomy: the place an informer keeps
// the objects it has seen.
//
// It mirrors three files of [k8s.io/client-go/tools/cache] at v0.37.2:
//
//   - store.go: [Store], [KeyFunc], [MetaNamespaceKeyFunc], [SplitMetaNamespaceKey],
//     [ExplicitKey], [KeyError], the [NewStore] / [NewIndexer] constructors and
//     the batch writes [TransactionStore], [Transaction] and [TransactionError];
//   - thread_safe_store.go: [ThreadSafeStore], a map from key to object guarded by
//     one RWMutex, with the secondary indexes kept beside it, and
//     [ThreadSafeStoreWithTransaction];
//   - index.go: [Indexer], [IndexFunc], [Indexers], [Indices], [NamespaceIndex]
//     and [MetaNamespaceIndexFunc];
//
// plus object-names.go ([ObjectName]).
//
// # The layers
//
// A [ThreadSafeStore] knows nothing about objects: callers hand it a key and a
// value. A [Store] (and its richer form, an [Indexer]) adds a [KeyFunc], so
// callers hand it whole objects and it works out the key. The informer's cache
// is an Indexer built by [NewIndexer] with [MetaNamespaceKeyFunc], so every
// object is filed under "namespace/name" (or just "name" for cluster-scoped
// objects).
//
// # Indexes
//
// An index is a named [IndexFunc] that maps an object to zero or more string
// values ("which namespace is it in?", "which node is it scheduled to?"). The
// store keeps, for every index, a reverse map from each value to the set of keys
// whose object produced it, and updates it on every write. Lookups by value
// ([Indexer.ByIndex]) are then a map read instead of a scan.
//
// # Transactions
//
// The cache returned by NewStore and NewIndexer is also a [TransactionStore]:
// Transaction applies a batch of adds, updates and deletes under one write
// lock, so readers see the store before the batch or after it. Keys are
// computed first; a transaction whose object cannot be keyed is skipped and
// reported in a [TransactionError] while the rest are applied. Chapter 4's
// RealFIFO consumer uses it for batch pops. See [ExampleTransactionStore].
//
// # What callers must not do
//
// Objects come back from Get, List and ByIndex exactly as they were stored:
// the same pointers, shared by every reader. Mutating one corrupts the cache for
// everyone and, worse, silently desynchronises the indexes, which are only
// recomputed when the store is written. See [ExampleNewIndexer] for the normal
// way in, and docs/01-store.md for the chapter.
package store
