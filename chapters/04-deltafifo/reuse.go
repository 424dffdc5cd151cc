package deltafifo

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
)

// KeyGetter is what a queue needs of the consumer's cache to reuse its
// objects during a relist: a lookup by key. The informer's indexer is one.
// Ours, for [RealFIFOOptions.RelistCache].
type KeyGetter interface {
	GetByKey(key string) (value any, exists bool, err error)
}

// Both queues reuse the cache's objects during a relist (see
// reflector.ReusingStore and reuseRelisted).
var (
	_ reflector.ReusingStore = &RealFIFO{}
	_ reflector.ReusingStore = &DeltaFIFO{}
)

// reuseRelisted is a queue's ReuseRelisted: the relist's half of the
// exchange that keeps a relist from holding a second copy of every object.
//
// obj is one object of a relist as it arrived (streamed: already passed
// once through the transformer by the reflector's temporary store, as
// upstream's is; listed: as decoded). If the cache holds an object of the
// same Go type, UID and resourceVersion under its key, the object has not
// changed since the cache got it: obj is given at once the one transform
// call the queue's Replace would give it (so the transformer still sees
// what upstream's sees, as often, just before the Replace rather than in
// it), and if the result still has the cached object's UID and
// resourceVersion the cached object is returned in its place. Either way
// the result is prepared: Replace must not transform it again.
//
// Anything else is returned as it came, not prepared, for Replace to
// transform as upstream's does: an object that changed, a new one, one
// without a UID (nothing says it is the same object), a tombstone, one
// whose cached namesake is of another type, and every object of a first
// list (the cache is empty). A transformer's error here is not reported:
// obj is returned unprepared, and the Replace's own call meets the error
// again and fails the relist as upstream's Replace would (the transformer
// was then called once more than upstream calls it).
//
// Why this is safe: an object with the same UID and resourceVersion is the
// same object in the same state (the API server gives every write a new
// resourceVersion), and the cached object is never written to: handlers
// must not mutate what the cache hands them (client-go's contract, which
// the cache's sharing with listers already relies on). The cached object
// is never passed to the transformer, which client-go warns may mutate its
// argument.
//
// What a handler can tell: for an unchanged object its relist OnUpdate
// gets the same pointer as old and new (upstream: two equal copies).
func reuseRelisted(cache KeyGetter, keyOf func(any) (string, error), transform TransformFunc, obj any) (any, bool) {
	if cache == nil {
		return obj, false
	}
	if _, tombstone := obj.(DeletedFinalStateUnknown); tombstone {
		return obj, false
	}
	if l, ok := cache.(interface{ Len() int }); ok && l.Len() == 0 {
		// A first list: nothing to reuse, and no key to build for it
		// (chapter 1's stores count without listing).
		return obj, false
	}
	key, err := keyOf(obj)
	if err != nil {
		return obj, false // Replace reports the key error
	}
	cached, exists, err := cache.GetByKey(key)
	if err != nil || !exists || !sameObjectVersion(cached, obj) {
		return obj, false
	}
	if transform != nil {
		t, err := transform(obj)
		if err != nil {
			return obj, false
		}
		if !sameObjectVersion(cached, t) {
			// A transformer that rewrote the UID or resourceVersion: keep
			// what it made, as upstream's Replace would.
			return t, true
		}
	}
	return cached, true
}

// sameObjectVersion reports whether a and b are objects of the same Go type
// with the same non-empty UID and the same resourceVersion.
func sameObjectVersion(a, b any) bool {
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	if _, tombstone := a.(DeletedFinalStateUnknown); tombstone {
		return false
	}
	am, err := meta.Accessor(a)
	if err != nil {
		return false
	}
	bm, err := meta.Accessor(b)
	if err != nil {
		return false
	}
	return am.GetUID() != "" && am.GetUID() == bm.GetUID() && am.GetResourceVersion() == bm.GetResourceVersion()
}

// ReuseRelisted offers the queue one object of a relist as it arrives; see
// [reflector.ReusingStore]. It reads the consumer's cache (KnownObjects, or
// RelistCache in atomic mode) without the queue's lock: the cache is
// thread-safe, and the queue's own state is not touched. A queue with
// neither returns obj as it came.
//
// Ours: client-go's RealFIFO has no counterpart.
func (f *RealFIFO) ReuseRelisted(obj any) (any, bool) {
	return reuseRelisted(f.relistCache, f.KeyOf, f.transformer, obj)
}

// ReuseRelisted offers the queue one object of a relist as it arrives; see
// [reflector.ReusingStore]. It reads KnownObjects (the informer's cache),
// without the queue's lock: the cache is thread-safe.
//
// Ours: client-go's DeltaFIFO has no counterpart.
func (f *DeltaFIFO) ReuseRelisted(obj any) (any, bool) {
	var cache KeyGetter
	if f.knownObjects != nil {
		cache = f.knownObjects
	}
	return reuseRelisted(cache, f.KeyOf, f.transformer, obj)
}
