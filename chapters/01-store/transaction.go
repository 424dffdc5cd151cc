package store

import (
	"errors"
	"fmt"
)

// TransactionType says what one [Transaction] does to the store.
//
// Mirrors [k8s.io/client-go/tools/cache.TransactionType] (store.go).
type TransactionType string

// The three writes a [Transaction] can make. Their values are upstream's.
//
// Mirrors the TransactionType constants of [k8s.io/client-go/tools/cache]
// (store.go).
const (
	TransactionTypeAdd    TransactionType = "Add"
	TransactionTypeUpdate TransactionType = "Update"
	TransactionTypeDelete TransactionType = "Delete"
)

// Transaction is one write of a batch: an object and whether to add, update
// or delete it. The store computes its key, as Add/Update/Delete would.
//
// Mirrors [k8s.io/client-go/tools/cache.Transaction] (store.go).
type Transaction struct {
	Object any
	Type   TransactionType
}

// TransactionStore is a store that can apply a batch of writes under one
// lock hold. The informer's cache (NewStore, NewIndexer) is one; callers find
// out with a type assertion, because [Store] does not include it.
//
// Why it exists: the RealFIFO consumer (chapter 4, processDeltasInBatch)
// pops up to a thousand deltas at once. Taking the write lock once for all
// of them, instead of once per delta, lets the informer keep up while
// listers hammer the read lock (upstream: kubernetes/kubernetes#132240,
// "InOrderInformersBatchProcess").
//
// Mirrors [k8s.io/client-go/tools/cache.TransactionStore] (store.go).
type TransactionStore interface {
	// Transaction applies txns in order, all under one write lock, so a
	// reader sees the store before the batch or after it, never in between.
	// A transaction whose object has no key (or whose Type is unknown) is
	// skipped and reported; the others are still applied. nil means every
	// transaction was applied.
	Transaction(txns ...Transaction) *TransactionError
}

// TransactionError reports a batch of which some transactions were not
// applied. SuccessfulIndices lists, in order, the positions in the batch that
// were applied; Errors says why each of the others was not, in batch order.
//
// A caller that runs side effects per transaction (event handlers) runs them
// for SuccessfulIndices only: the store holds exactly those writes.
//
// Mirrors [k8s.io/client-go/tools/cache.TransactionError] (store.go); the
// message is worded differently.
type TransactionError struct {
	SuccessfulIndices []int
	TotalTransactions int
	Errors            []error
}

var _ error = &TransactionError{}

// Error says how many of the batch failed and why.
func (t *TransactionError) Error() string {
	return fmt.Sprintf("%d of %d store transactions not applied: %v",
		t.TotalTransactions-len(t.SuccessfulIndices), t.TotalTransactions, errors.Join(t.Errors...))
}

// ThreadSafeStoreWithTransaction is a [ThreadSafeStore] that can apply
// already-keyed writes under one lock hold. [NewThreadSafeStore]'s store is
// one.
//
// Mirrors [k8s.io/client-go/tools/cache.ThreadSafeStoreWithTransaction]
// (thread_safe_store.go).
type ThreadSafeStoreWithTransaction interface {
	ThreadSafeStore
	// Transaction applies txns in order under one write lock. The store's
	// last-seen resourceVersion becomes the last transaction's object's (if it
	// has metadata), whatever that transaction's type.
	Transaction(txns ...ThreadSafeStoreTransaction)
}

// ThreadSafeStoreTransaction is a [Transaction] whose key has already been
// computed.
//
// Mirrors [k8s.io/client-go/tools/cache.ThreadSafeStoreTransaction]
// (thread_safe_store.go).
type ThreadSafeStoreTransaction struct {
	Transaction
	Key string
}

var (
	_ TransactionStore               = &cache{}
	_ ThreadSafeStoreWithTransaction = &threadSafeMap{}
)

// Transaction keys every transaction first, without any lock, then hands the
// keyed ones to the thread-safe map in a single call: so the whole batch is
// one lock hold, and a key error cannot leave a write half done.
//
// Mirrors cache.Transaction (upstream store.go): a transaction whose key
// cannot be computed is left out and reported, the rest are applied, and the
// error lists which were. Unlike upstream, an unknown Type is reported the
// same way; upstream counts it as successful although it writes nothing, so a
// caller would run a handler for a write that never happened.
func (c *cache) Transaction(txns ...Transaction) *TransactionError {
	storage, ok := c.cacheStorage.(ThreadSafeStoreWithTransaction)
	if !ok {
		// Cannot happen with our constructors; kept so a custom
		// ThreadSafeStore gets upstream's answer instead of a panic.
		return &TransactionError{TotalTransactions: len(txns), Errors: []error{errors.New("transaction not supported")}}
	}
	keyed := make([]ThreadSafeStoreTransaction, 0, len(txns))
	applied := make([]int, 0, len(txns))
	var errs []error
	for i, txn := range txns {
		switch txn.Type {
		case TransactionTypeAdd, TransactionTypeUpdate, TransactionTypeDelete:
		default:
			errs = append(errs, fmt.Errorf("transaction %d: unknown type %q (want Add, Update or Delete)", i, txn.Type))
			continue
		}
		key, err := c.key(txn.Object)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		applied = append(applied, i)
		keyed = append(keyed, ThreadSafeStoreTransaction{Transaction: txn, Key: key})
	}
	storage.Transaction(keyed...)
	if errs != nil {
		return &TransactionError{SuccessfulIndices: applied, TotalTransactions: len(txns), Errors: errs}
	}
	return nil
}
