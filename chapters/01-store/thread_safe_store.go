package store

import (
	"fmt"
	"slices"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/sets"
)

// ThreadSafeStore is a concurrent map from key to object with secondary
// indexes. Unlike [Store] it is handed keys, not asked to compute them.
//
// Everything it returns is shared, not copied: treat it as read-only (see the
// package comment).
//
// Mirrors [k8s.io/client-go/tools/cache.ThreadSafeStore] (thread_safe_store.go).
type ThreadSafeStore interface {
	Add(key string, obj any)
	Update(key string, obj any)
	// Delete is DeleteWithObject(key, nil): the object is gone but the store's
	// last-seen resourceVersion does not move.
	Delete(key string)
	// DeleteWithObject removes key and records obj's resourceVersion as the
	// last one the store has seen.
	DeleteWithObject(key string, obj any)
	Get(key string) (item any, exists bool)
	List() []any
	ListKeys() []string
	// Replace swaps in a whole new map (it is kept, not copied) and rebuilds
	// every index from it.
	Replace(items map[string]any, resourceVersion string)
	Index(indexName string, obj any) ([]any, error)
	IndexKeys(indexName, indexedValue string) ([]string, error)
	ListIndexFuncValues(name string) []string
	ByIndex(indexName, indexedValue string) ([]any, error)
	GetIndexers() Indexers
	AddIndexers(newIndexers Indexers) error
	// Bookmark records rv as the last resourceVersion seen without touching
	// any object. An informer's consumer calls it for a watch bookmark once
	// the bookmark comes out of the queue (chapter 4), so it lands after
	// every event the watch sent before it.
	Bookmark(rv string)
	// LastStoreSyncResourceVersion is the resourceVersion of the most recent
	// write (object written, Replace, or Bookmark).
	LastStoreSyncResourceVersion() string
	// Resync does nothing; it exists so a ThreadSafeStore fits where a Store's
	// method set is expected. Deprecated upstream too.
	Resync() error
}

// NewThreadSafeStore returns an empty store with the given index functions.
// indices should be empty; it is filled as objects arrive.
//
// Mirrors [k8s.io/client-go/tools/cache.NewThreadSafeStore] (thread_safe_store.go),
// without the metrics option.
func NewThreadSafeStore(indexers Indexers, indices Indices) ThreadSafeStore {
	if indexers == nil {
		indexers = Indexers{}
	}
	if indices == nil {
		indices = Indices{}
	}
	return &threadSafeMap{
		items: map[string]any{},
		index: &storeIndex{indexers: indexers, indices: indices},
	}
}

// threadSafeMap implements ThreadSafeStore.
//
// Mirrors the unexported threadSafeMap in upstream thread_safe_store.go.
type threadSafeMap struct {
	lock sync.RWMutex
	// Guarded by lock:

	items map[string]any
	// index is consistent with items whenever lock is not held for writing;
	// see storeIndex for the invariant.
	index *storeIndex
	// rv is the resourceVersion of the last write, for
	// LastStoreSyncResourceVersion.
	rv string
}

// storeIndex holds the index functions and their reverse maps.
//
// Invariant (checked by checkIndexInvariant in the tests after every random
// operation): for every index name n, value v and key k,
//
//	k ∈ indices[n][v]  iff  items[k] exists and v ∈ indexers[n](items[k])
//
// and no indices[n][v] is an empty set. Empty sets are deleted rather than kept
// because high-churn, high-cardinality values (pod UIDs, node names in a big
// cluster) otherwise leak memory forever: kubernetes/kubernetes#84959.
//
// Mirrors the unexported storeIndex in upstream thread_safe_store.go.
type storeIndex struct {
	indexers Indexers
	indices  Indices
}

func (c *threadSafeMap) Add(key string, obj any) { c.Update(key, obj) }

func (c *threadSafeMap) Update(key string, obj any) {
	// Read the resourceVersion before taking the lock: meta.Accessor is a type
	// switch plus an interface call, and nothing here needs the lock for it.
	rv, hasRV := resourceVersionOf(obj)
	c.lock.Lock()
	defer c.lock.Unlock()
	c.update_locked(key, obj)
	if hasRV {
		c.rv = rv
	}
}

func (c *threadSafeMap) update_locked(key string, obj any) {
	old := c.items[key]
	c.items[key] = obj
	c.index.updateIndices_locked(old, obj, key)
}

func (c *threadSafeMap) Delete(key string) { c.DeleteWithObject(key, nil) }

func (c *threadSafeMap) DeleteWithObject(key string, obj any) {
	rv, hasRV := "", false
	if obj != nil {
		rv, hasRV = resourceVersionOf(obj)
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	c.delete_locked(key)
	if hasRV {
		c.rv = rv
	}
}

func (c *threadSafeMap) delete_locked(key string) {
	if old, ok := c.items[key]; ok {
		c.index.updateIndices_locked(old, nil, key)
		delete(c.items, key)
	}
}

// Transaction applies the batch under one write lock: a reader (who takes
// the read lock) sees all of it or none of it.
//
// The resourceVersion rule is upstream's (threadSafeMap.Transaction): only
// the last transaction's object counts, and it counts for a Delete too. That
// is not what the same writes made one by one would leave when the last
// object has no metadata; we follow upstream so LastStoreSyncResourceVersion
// after a batch is client-go's. Nothing in client-go reads it; controllers
// that check their own writes have reached the cache do (docs/01-store.md).
func (c *threadSafeMap) Transaction(txns ...ThreadSafeStoreTransaction) {
	if len(txns) == 0 {
		return
	}
	rv, hasRV := resourceVersionOf(txns[len(txns)-1].Object)
	c.lock.Lock()
	defer c.lock.Unlock()
	for _, txn := range txns {
		switch txn.Type {
		case TransactionTypeAdd, TransactionTypeUpdate:
			c.update_locked(txn.Key, txn.Object)
		case TransactionTypeDelete:
			c.delete_locked(txn.Key)
		}
	}
	if hasRV {
		c.rv = rv
	}
}

func (c *threadSafeMap) Get(key string) (any, bool) {
	c.lock.RLock()
	defer c.lock.RUnlock()
	item, ok := c.items[key]
	return item, ok
}

func (c *threadSafeMap) List() []any {
	c.lock.RLock()
	defer c.lock.RUnlock()
	out := make([]any, 0, len(c.items))
	for _, item := range c.items {
		out = append(out, item)
	}
	return out
}

func (c *threadSafeMap) ListKeys() []string {
	c.lock.RLock()
	defer c.lock.RUnlock()
	out := make([]string, 0, len(c.items))
	for key := range c.items {
		out = append(out, key)
	}
	return out
}

func (c *threadSafeMap) Replace(items map[string]any, resourceVersion string) {
	if items == nil {
		// A nil map would make the next Add panic; upstream has that trap.
		items = map[string]any{}
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	c.items = items
	c.rv = resourceVersion
	// Rebuilding from scratch is simpler and, for a relist that changes most
	// objects, no slower than diffing old against new.
	c.index.indices = Indices{}
	for key, item := range items {
		c.index.updateIndices_locked(nil, item, key)
	}
}

func (c *threadSafeMap) Index(indexName string, obj any) ([]any, error) {
	c.lock.RLock()
	defer c.lock.RUnlock()
	indexFunc := c.index.indexers[indexName]
	if indexFunc == nil {
		return nil, errNoIndex(indexName)
	}
	// obj need not be stored: this answers "who shares a value with this
	// object?", e.g. every pod on the same node as a given pod.
	values, err := indexFunc(obj)
	if err != nil {
		return nil, err
	}
	idx := c.index.indices[indexName]
	if len(values) == 1 {
		// The common case needs no de-duplication.
		return c.objects_locked(idx[values[0]]), nil
	}
	keys := sets.New[string]()
	for _, v := range values {
		keys = keys.Union(idx[v])
	}
	return c.objects_locked(keys), nil
}

func (c *threadSafeMap) objects_locked(keys sets.Set[string]) []any {
	out := make([]any, 0, len(keys))
	for key := range keys {
		out = append(out, c.items[key])
	}
	return out
}

func (c *threadSafeMap) ByIndex(indexName, indexedValue string) ([]any, error) {
	c.lock.RLock()
	defer c.lock.RUnlock()
	if c.index.indexers[indexName] == nil {
		return nil, errNoIndex(indexName)
	}
	return c.objects_locked(c.index.indices[indexName][indexedValue]), nil
}

func (c *threadSafeMap) IndexKeys(indexName, indexedValue string) ([]string, error) {
	c.lock.RLock()
	defer c.lock.RUnlock()
	if c.index.indexers[indexName] == nil {
		return nil, errNoIndex(indexName)
	}
	keys := c.index.indices[indexName][indexedValue]
	out := make([]string, 0, len(keys))
	for key := range keys {
		out = append(out, key)
	}
	// Sorted because upstream returns sets.List, and callers (and tests) may
	// rely on a stable order.
	sort.Strings(out)
	return out, nil
}

func (c *threadSafeMap) ListIndexFuncValues(indexName string) []string {
	c.lock.RLock()
	defer c.lock.RUnlock()
	idx := c.index.indices[indexName]
	out := make([]string, 0, len(idx))
	for value := range idx {
		out = append(out, value)
	}
	return out
}

func (c *threadSafeMap) GetIndexers() Indexers {
	c.lock.RLock()
	defer c.lock.RUnlock()
	// A copy: upstream hands out its live map without the lock, which races
	// with AddIndexers. Callers only read it, so a copy changes nothing for them.
	out := make(Indexers, len(c.index.indexers))
	for name, f := range c.index.indexers {
		out[name] = f
	}
	return out
}

func (c *threadSafeMap) AddIndexers(newIndexers Indexers) error {
	c.lock.Lock()
	defer c.lock.Unlock()
	var clash sets.Set[string]
	for name := range newIndexers {
		if _, taken := c.index.indexers[name]; taken {
			if clash == nil {
				clash = sets.New[string]()
			}
			clash.Insert(name)
		}
	}
	if clash != nil {
		// Same wording (and set formatting) as upstream's addIndexers.
		return fmt.Errorf("indexer conflict: %v", clash)
	}
	for name, f := range newIndexers {
		c.index.indexers[name] = f
	}
	// Back-fill: without it, objects stored before the index existed would be
	// invisible to ByIndex until their next update.
	for key, item := range c.items {
		for name := range newIndexers {
			c.index.updateSingleIndex_locked(name, nil, item, key)
		}
	}
	return nil
}

func (c *threadSafeMap) Bookmark(rv string) {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.rv = rv
}

func (c *threadSafeMap) LastStoreSyncResourceVersion() string {
	c.lock.RLock()
	defer c.lock.RUnlock()
	return c.rv
}

func (c *threadSafeMap) Resync() error { return nil }

// updateIndices_locked moves key from the values oldObj had to the values
// newObj has, in every index. oldObj nil means an add; newObj nil a delete.
func (i *storeIndex) updateIndices_locked(oldObj, newObj any, key string) {
	for name := range i.indexers {
		i.updateSingleIndex_locked(name, oldObj, newObj, key)
	}
}

func (i *storeIndex) updateSingleIndex_locked(name string, oldObj, newObj any, key string) {
	indexFunc := i.indexers[name]
	oldValues := indexValuesOrPanic(indexFunc, name, oldObj, key)
	newValues := indexValuesOrPanic(indexFunc, name, newObj, key)

	idx := i.indices[name]
	if idx == nil {
		idx = index{}
		i.indices[name] = idx
	}
	// Most updates (a status change, a new annotation) leave every index value
	// as it was; skipping them keeps Update at one map write. Upstream skips
	// only the single-value case; equal slices of any length give the same
	// result, so we skip those too.
	if oldObj != nil && newObj != nil && slices.Equal(oldValues, newValues) {
		return
	}
	for _, v := range oldValues {
		if set := idx[v]; set != nil {
			set.Delete(key)
			if set.Len() == 0 {
				delete(idx, v) // see the storeIndex invariant
			}
		}
	}
	for _, v := range newValues {
		set := idx[v]
		if set == nil {
			set = sets.New[string]()
			idx[v] = set
		}
		set.Insert(key)
	}
}

// indexValuesOrPanic returns nil for a nil object. An index function error
// panics, as upstream does: the write is already half done, and returning an
// error would leave the indexes silently wrong, which is worse than a crash.
func indexValuesOrPanic(f IndexFunc, name string, obj any, key string) []string {
	if obj == nil {
		return nil
	}
	values, err := f(obj)
	if err != nil {
		panic(fmt.Errorf("unable to calculate an index entry for key %q on index %q: %v", key, name, err))
	}
	return values
}

func errNoIndex(name string) error {
	return fmt.Errorf("Index with name %s does not exist", name)
}

// resourceVersionOf reads obj's resourceVersion; ok is false for objects
// without metadata (an ExplicitKey, a test's plain value), which then leave the
// store's last-seen resourceVersion alone.
func resourceVersionOf(obj any) (rv string, ok bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", false
	}
	return m.GetResourceVersion(), true
}
