package dropin

import (
	"reflect"
	"sync/atomic"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
)

// The live view's estimate of the bytes an informer's cache holds (ours:
// client-go measures nothing of the kind).
//
// It is a running total, kept as objects come and go: chapter 5 tells
// Observer.Stored every change it writes to the cache (old out, new in),
// and the total moves by the difference of their sizes. An object is
// sized when it enters the cache and again when it leaves it (it is not
// remembered: a size per key would cost more memory than it saves CPU); a
// change that keeps the same object (a resync, or a relisted object the
// reflector exchanged for the cached one) costs a pointer comparison.
// Nothing is counted before the first [LiveViewHandler] is made: then each
// live informer's cache is sized once, under the lock that holds its
// changes back (processor.ReadCache), and every informer built later
// starts counting from its empty cache. A read of api/state loads two
// atomics per informer: it never walks the cache.
//
// What an estimate is, and is not: see objectSize.

// cacheBytes is one informer's running estimate.
type cacheBytes struct {
	// on: counting (set under the cache's writer lock, by start, so that
	// no change is missed or counted twice).
	on atomic.Bool
	// held is the estimate of the objects the cache holds now.
	held atomic.Int64
	// transformed says a transform is set; before and after are the sizes
	// of the objects it was given and returned since counting began.
	transformed   atomic.Bool
	before, after atomic.Int64
}

// stored is the informer's Observer.Stored: old left the cache, new
// entered it (either may be nil).
func (c *cacheBytes) stored(old, new any) {
	if !c.on.Load() || sameObject(old, new) {
		return
	}
	c.held.Add(objectSize(new) - objectSize(old))
}

// start sizes inf's cache once and counts from then on; a second call
// does nothing.
func (c *cacheBytes) start(inf processor.SharedInformer) {
	if c.on.Load() {
		return
	}
	_ = processor.ReadCache(inf, func(objs []any) {
		if c.on.Load() {
			return
		}
		var n int64
		for _, o := range objs {
			n += objectSize(o)
		}
		c.held.Store(n)
		c.on.Store(true)
	})
}

// transform wraps a transform so that, while counting, the size of what
// it is given and of what it returns are added up: the page's "before the
// transform". The object is sized before the transform runs (a transform
// may change it in place and return it).
func (c *cacheBytes) transform(f func(any) (any, error)) func(any) (any, error) {
	c.transformed.Store(true)
	return func(obj any) (any, error) {
		if !c.on.Load() {
			return f(obj)
		}
		in := objectSize(obj)
		out, err := f(obj)
		if err == nil {
			c.before.Add(in)
			c.after.Add(objectSize(out))
		}
		return out, err
	}
}

// read is the estimate now, and before the transform (-1: no transform,
// or none of its results seen yet): the held bytes scaled by what the
// transform kept of the objects it was given since counting began.
func (c *cacheBytes) read() (held, beforeTransform int64, counting bool) {
	held, beforeTransform = c.held.Load(), -1
	if c.transformed.Load() {
		if b, a := c.before.Load(), c.after.Load(); a > 0 {
			beforeTransform = int64(float64(held) * float64(b) / float64(a))
		}
	}
	return held, beforeTransform, c.on.Load()
}

// readForPage is read as api/state shows it: -1 for what is not known.
func (c *cacheBytes) readForPage() (held, beforeTransform int64) {
	held, beforeTransform, counting := c.read()
	if !counting {
		return -1, -1
	}
	return held, beforeTransform
}

// sameObject: a and b are the same object (or both nil), without
// comparing values whose type cannot be compared.
func sameObject(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}

// countSizings makes objectSize count its calls in objectSizings: set by
// the package's tests only (a test that api/state sizes nothing).
var (
	countSizings  bool
	objectSizings atomic.Int64
)

// sizer is what a typed Kubernetes object answers: its protobuf encoding's
// length (generated code, no allocation).
type sizer interface{ Size() int }

// objectSize estimates the bytes obj holds on the heap; 0 for nil.
//
// For the API's typed objects (they answer Size(): corev1.Pod,
// metav1.PartialObjectMetadata and every type with generated protobuf
// code) it is that: the length of the object's protobuf encoding, which
// is about the bytes of its strings and numbers. For anything else
// (unstructured.Unstructured, a type of the user's) it is a walk of the
// value: its structs' sizes, the length of its strings and the capacity
// of its slices, and a fixed overhead per map entry (mapEntryOverhead).
//
// What it is not: the heap the object takes. The Go value of a decoded
// object holds more than its encoding (a pointer, a length and a capacity
// per string and slice, struct fields left empty, map buckets, the
// allocator's rounding up), and strings shared between objects are
// counted once per object. Read it to compare informers, to see what a
// transform removed, and to see the total move; read the process's heap
// for what the cache costs.
func objectSize(obj any) int64 {
	if obj == nil {
		return 0
	}
	if countSizings {
		objectSizings.Add(1)
	}
	if s, ok := obj.(sizer); ok {
		return int64(s.Size())
	}
	return walkSize(reflect.ValueOf(obj), 0)
}

// mapEntryOverhead is what walkSize counts for each map entry beyond its
// key and value: a bucket slot's share, roughly.
const mapEntryOverhead = 16

// maxWalkDepth bounds walkSize on a value that refers to itself.
const maxWalkDepth = 64

// walkSize is the bytes v refers to, beyond v itself.
func walkSize(v reflect.Value, depth int) int64 {
	if depth > maxWalkDepth || !v.IsValid() {
		return 0
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		return int64(e.Type().Size()) + walkSize(e, depth+1)
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		return int64(e.Type().Size()) + walkSize(e, depth+1)
	case reflect.String:
		return int64(v.Len())
	case reflect.Struct:
		var n int64
		for i := range v.NumField() {
			n += walkSize(v.Field(i), depth+1)
		}
		return n
	case reflect.Slice:
		if v.IsNil() {
			return 0
		}
		n := int64(v.Cap()) * int64(v.Type().Elem().Size())
		if hasReferences(v.Type().Elem()) {
			for i := range v.Len() {
				n += walkSize(v.Index(i), depth+1)
			}
		}
		return n
	case reflect.Array:
		var n int64
		if hasReferences(v.Type().Elem()) {
			for i := range v.Len() {
				n += walkSize(v.Index(i), depth+1)
			}
		}
		return n
	case reflect.Map:
		if v.IsNil() {
			return 0
		}
		kt, vt := v.Type().Key(), v.Type().Elem()
		n := int64(v.Len()) * (int64(kt.Size()+vt.Size()) + mapEntryOverhead)
		it := v.MapRange()
		for it.Next() {
			n += walkSize(it.Key(), depth+1) + walkSize(it.Value(), depth+1)
		}
		return n
	}
	return 0
}

// hasReferences: a value of t may refer to memory outside itself.
func hasReferences(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.String, reflect.Slice, reflect.Map, reflect.Struct, reflect.Array:
		return true
	}
	return false
}
