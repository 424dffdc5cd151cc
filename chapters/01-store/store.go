package store

import "fmt"

// Store is a key→object cache that computes keys itself with a [KeyFunc].
// It is what the reflector (chapter 3) writes into and what listers
// (chapter 2) read from.
//
// Mirrors [k8s.io/client-go/tools/cache.Store] (store.go).
type Store interface {
	// Add stores obj under its key, replacing whatever was there.
	Add(obj any) error
	// Update is Add: a Store does not distinguish the two; the distinction
	// matters only to event handlers (chapter 5).
	Update(obj any) error
	// Delete removes obj's key. Deleting a key that is not there is not an error.
	Delete(obj any) error
	// List returns every stored object, in no particular order.
	List() []any
	// ListKeys returns every key, in no particular order.
	ListKeys() []string
	// Get looks up the object stored under obj's key.
	Get(obj any) (item any, exists bool, err error)
	// GetByKey looks up an object by key ("namespace/name").
	GetByKey(key string) (item any, exists bool, err error)
	// Replace makes the store hold exactly list, atomically: readers see the
	// old contents or the new, never a mix. resourceVersion is the list's.
	// This is how a reflector applies a LIST.
	Replace(list []any, resourceVersion string) error
	// Resync is a no-op for a plain store; queues (chapter 4) give it meaning.
	Resync() error
	// LastStoreSyncResourceVersion is the resourceVersion of the last write
	// the store applied (an object's, a Replace's or a Bookmark's).
	LastStoreSyncResourceVersion() string
	// Bookmark records rv without changing any object.
	Bookmark(rv string)
}

// TransformFunc rewrites an object before it is stored or queued, typically
// to drop fields nobody reads (managedFields) and save memory. It must not
// mutate its argument: that object may be shared.
//
// Mirrors [k8s.io/client-go/tools/cache.TransformFunc] (delta_fifo.go). It
// lives here, not in chapter 4 beside the queues, because a store takes one
// too ([WithTransformer]) and chapter 3's reflector hands its queue's
// transformer to the temporary store of a streamed list.
type TransformFunc func(any) (any, error)

// StoreOption configures a store made by [NewStore] or [NewIndexer].
//
// Mirrors [k8s.io/client-go/tools/cache.StoreOption] (store.go).
type StoreOption = func(*cache)

// WithTransformer makes the store pass every object it is given through
// transformer before keeping it (Add, Update and each item of Replace; not
// Delete, whose object is only read for its key).
//
// Mirrors [k8s.io/client-go/tools/cache.WithTransformer] (store.go).
func WithTransformer(transformer TransformFunc) StoreOption {
	return func(c *cache) { c.transformer = transformer }
}

// NewStore returns a Store with no indexes.
//
// Mirrors [k8s.io/client-go/tools/cache.NewStore] (store.go), without the
// metrics option.
func NewStore(keyFunc KeyFunc, opts ...StoreOption) Store {
	c := &cache{cacheStorage: NewThreadSafeStore(Indexers{}, Indices{}), keyFunc: keyFunc}
	for _, o := range opts {
		o(c)
	}
	return c
}

// NewIndexer returns an [Indexer] with the given index functions; the informer's
// cache is NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc}).
//
// Mirrors [k8s.io/client-go/tools/cache.NewIndexer] (store.go), without the
// metrics option.
func NewIndexer(keyFunc KeyFunc, indexers Indexers, opts ...StoreOption) Indexer {
	c := &cache{cacheStorage: NewThreadSafeStore(indexers, Indices{}), keyFunc: keyFunc}
	for _, o := range opts {
		o(c)
	}
	return c
}

// cache turns a ThreadSafeStore into an Indexer by computing keys. It holds no
// lock of its own: every method computes the key first, then makes exactly one
// call into cacheStorage, whose lock makes that call atomic.
//
// Mirrors the unexported cache in upstream store.go.
type cache struct {
	cacheStorage ThreadSafeStore
	keyFunc      KeyFunc
	// transformer, if set, rewrites each object on its way in; see
	// WithTransformer.
	transformer TransformFunc
}

// transform applies the store's transformer, if any. The key is computed
// from the object as given, before this, as upstream does: a transformer
// that dropped metadata must not move the object to another key.
func (c *cache) transform(obj any) (any, error) {
	if c.transformer == nil {
		return obj, nil
	}
	t, err := c.transformer(obj)
	if err != nil {
		return nil, fmt.Errorf("transforming: %w", err)
	}
	return t, nil
}

var _ Indexer = &cache{}

func (c *cache) key(obj any) (string, error) {
	key, err := c.keyFunc(obj)
	if err != nil {
		return "", KeyError{Obj: obj, Err: err}
	}
	return key, nil
}

func (c *cache) Add(obj any) error {
	key, err := c.key(obj)
	if err != nil {
		return err
	}
	if obj, err = c.transform(obj); err != nil {
		return err
	}
	c.cacheStorage.Add(key, obj)
	return nil
}

func (c *cache) Update(obj any) error {
	key, err := c.key(obj)
	if err != nil {
		return err
	}
	if obj, err = c.transform(obj); err != nil {
		return err
	}
	c.cacheStorage.Update(key, obj)
	return nil
}

func (c *cache) Delete(obj any) error {
	key, err := c.key(obj)
	if err != nil {
		return err
	}
	// WithObject, so the deleted object's resourceVersion becomes the store's
	// last-seen one, exactly as an update's would.
	c.cacheStorage.DeleteWithObject(key, obj)
	return nil
}

func (c *cache) List() []any        { return c.cacheStorage.List() }
func (c *cache) ListKeys() []string { return c.cacheStorage.ListKeys() }

func (c *cache) Get(obj any) (any, bool, error) {
	key, err := c.key(obj)
	if err != nil {
		return nil, false, err
	}
	return c.GetByKey(key)
}

func (c *cache) GetByKey(key string) (any, bool, error) {
	item, ok := c.cacheStorage.Get(key)
	return item, ok, nil
}

func (c *cache) Replace(list []any, resourceVersion string) error {
	// Keys are computed before anything is touched, so one bad object leaves
	// the store exactly as it was instead of half replaced.
	items := make(map[string]any, len(list))
	for _, item := range list {
		key, err := c.key(item)
		if err != nil {
			return err
		}
		if item, err = c.transform(item); err != nil {
			return err
		}
		items[key] = item
	}
	c.cacheStorage.Replace(items, resourceVersion)
	return nil
}

func (c *cache) Resync() error { return nil }
func (c *cache) LastStoreSyncResourceVersion() string {
	return c.cacheStorage.LastStoreSyncResourceVersion()
}
func (c *cache) Bookmark(rv string) { c.cacheStorage.Bookmark(rv) }

func (c *cache) Index(indexName string, obj any) ([]any, error) {
	return c.cacheStorage.Index(indexName, obj)
}

func (c *cache) IndexKeys(indexName, indexedValue string) ([]string, error) {
	return c.cacheStorage.IndexKeys(indexName, indexedValue)
}

func (c *cache) ListIndexFuncValues(indexName string) []string {
	return c.cacheStorage.ListIndexFuncValues(indexName)
}

func (c *cache) ByIndex(indexName, indexedValue string) ([]any, error) {
	return c.cacheStorage.ByIndex(indexName, indexedValue)
}

func (c *cache) GetIndexers() Indexers { return c.cacheStorage.GetIndexers() }

func (c *cache) AddIndexers(newIndexers Indexers) error {
	return c.cacheStorage.AddIndexers(newIndexers)
}
