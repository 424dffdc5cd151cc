package store

// Len reports how many objects the store holds, without building the list
// of keys that len(ListKeys()) would. A live view polls it several times a
// second; on a cache of 100,000 objects ListKeys would allocate 1.6 MB per
// poll only to be counted.
//
// Ours: neither client-go's cache nor its threadSafeMap (store.go,
// thread_safe_store.go) has a Len method, and the Store and Indexer
// interfaces do not grow one here either: callers that want it ask for
// interface{ Len() int }, so any other Indexer still works with them.
func (c *cache) Len() int {
	if l, ok := c.cacheStorage.(interface{ Len() int }); ok {
		return l.Len()
	}
	return len(c.cacheStorage.ListKeys())
}

// Len reports how many objects are stored; see [cache.Len].
func (c *threadSafeMap) Len() int {
	c.lock.RLock()
	defer c.lock.RUnlock()
	return len(c.items)
}
