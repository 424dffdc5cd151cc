package liveprobe

import (
	"reflect"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"weak"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"

	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
)

// What an informer holds, as both live views show it (dropin's
// LiveViewHandler and trace-demo's page): the estimate of the bytes its
// cache holds ([CacheBytes]), the reflector's last relist
// ([ReflectorProbe.LastRelist], its heap peak from [ReadHeap]), written
// here once for both ([Holdings]).
//
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
// Nothing is counted before [CacheBytes.Start]: dropin starts each live
// informer's count when the first LiveViewHandler is made (its cache is
// sized once then, under the lock that holds its changes back:
// processor.ReadCache), and every informer built later from its empty
// cache; the demo starts its informer's before it runs. A read of the
// page's state loads two atomics per informer: it never walks the cache.
//
// What an estimate is, and is not: see [ObjectSize].

// CacheBytes is one informer's running estimate of the bytes its cache
// holds: give its Stored to the informer as chapter 5's Observer.Stored,
// wrap the informer's transform (if any) with Transform, and call Start.
// The zero value is ready, and counts nothing until Start.
//
// Ours: client-go has no such estimate.
type CacheBytes struct {
	// on: counting (set under the cache's writer lock, by start, so that
	// no change is missed or counted twice).
	on atomic.Bool
	// held is the estimate of the objects the cache holds now.
	held atomic.Int64
	// transformed says a transform is set; before and after are the sizes
	// of the objects it was given and returned since counting began.
	transformed   atomic.Bool
	before, after atomic.Int64

	// streams, once Follow has set it, is where the stream windows are
	// kept (see streamWindows). A separate object, not fields of c: the
	// probe holds it, and a probe must not hold c, which lives inside the
	// informer it counts for (dropin's Informer): a registry that keeps
	// probes would then keep every informer, and its cache, alive.
	streams *streamWindows
}

// streamWindows is what a [CacheBytes] and its probe share: how many
// streams' initial states are being transformed now (open), for only then
// can the transform be given an object twice, and only then are the
// objects it returns remembered.
type streamWindows struct {
	open atomic.Int32

	mu sync.Mutex
	// Guarded by mu: given holds the objects the transform returned while
	// a stream's initial state came that have not yet entered the cache,
	// each by a weak pointer, so an object given back to the transform is
	// known as one it has seen and is not counted twice (see
	// CacheBytes.Transform). A weak pointer stands for one object, not an
	// address: an object allocated where a collected one was is not taken
	// for it, and given keeps nothing alive. Stored takes an object out as
	// it enters the cache; one that never does (a relisted copy the
	// reflector exchanged for the cached object, a relist that failed) is
	// dropped by a sweep once collected, and everything is dropped when
	// the last window closes. swept is len(given) after the last sweep.
	given map[weak.Pointer[byte]]struct{}
	swept int
}

// Follow has p tell c when a stream's initial state is coming (from the
// STREAM request until the reflector reads on after its Replace): while
// one is, the objects the transform returns are remembered, so that
// Replace's second transform of each is not counted again (Transform).
// Call it once, before the informer runs. Without it, or for a stream p
// does not relay (one opened before the first live view), a streamed
// object is counted twice.
func (c *CacheBytes) Follow(p *ReflectorProbe) {
	w := &streamWindows{}
	c.streams, p.streams = w, w.window
}

// window: a stream's initial state starts coming (open), or the
// reflector is past the Replace that followed it.
func (w *streamWindows) window(open bool) {
	if open {
		w.open.Add(1)
		return
	}
	if w.open.Add(-1) == 0 {
		w.mu.Lock()
		w.given, w.swept = nil, 0
		w.mu.Unlock()
	}
}

// during reports whether a stream's initial state is being transformed
// now (false without Follow).
func (w *streamWindows) during() bool { return w != nil && w.open.Load() > 0 }

// Stored is the informer's Observer.Stored: old left the cache, new
// entered it (either may be nil).
func (c *CacheBytes) Stored(old, new any) {
	if !c.on.Load() || sameObject(old, new) {
		return
	}
	if c.streams.during() {
		if id, ok := identity(new); ok {
			c.streams.mu.Lock()
			delete(c.streams.given, id)
			c.streams.mu.Unlock()
		}
	}
	c.held.Add(ObjectSize(new) - ObjectSize(old))
}

// Start sizes inf's cache once and counts from then on; a second call
// does nothing. inf must have been made by chapter 5 (processor.ReadCache)
// with Stored as its Observer.Stored.
func (c *CacheBytes) Start(inf processor.SharedInformer) {
	if c.on.Load() {
		return
	}
	_ = processor.ReadCache(inf, func(objs []any) {
		if c.on.Load() {
			return
		}
		var n int64
		for _, o := range objs {
			n += ObjectSize(o)
		}
		c.held.Store(n)
		c.on.Store(true)
	})
}

// Transform wraps a transform so that, while counting, the size of what
// it is given and of what it returns are added up: the page's "before the
// transform". The object is sized before the transform runs (a transform
// may change it in place and return it). It changes nothing f is given
// or returns.
//
// Each object is counted once, though the informer may give it to f
// twice: an object streamed in a watch-list's initial state is
// transformed as it arrives (the reflector's temporary store) and again
// in the RealFIFO's Replace, as client-go's is (reflector.go watchList,
// the_real_fifo.go Replace). The second call is given what the first
// returned, and counting it would add the bytes after the transform to
// both sums: with a transform that halves every object, the page read
// 1.5 times the bytes held instead of 2. So while a stream's initial
// state comes ([CacheBytes.Follow]) the objects f returns are remembered
// (weakly: see streamWindows.given) until they enter the cache, and a call
// given one of them is made but not counted. The price, during a stream
// only: about half a microsecond an object (a weak pointer, whose runtime
// record of about 40 bytes stays beside the object for its life, and a
// map entry until it is stored). A watch event, given to f once, pays
// nothing more.
func (c *CacheBytes) Transform(f func(any) (any, error)) func(any) (any, error) {
	c.transformed.Store(true)
	return func(obj any) (any, error) {
		if !c.on.Load() {
			return f(obj)
		}
		if !c.streams.during() {
			in := ObjectSize(obj)
			out, err := f(obj)
			if err == nil {
				c.before.Add(in)
				c.after.Add(ObjectSize(out))
			}
			return out, err
		}
		if c.streams.seen(obj) {
			out, err := f(obj)
			if err == nil {
				c.streams.remember(out)
			}
			return out, err
		}
		in := ObjectSize(obj)
		out, err := f(obj)
		if err == nil {
			c.before.Add(in)
			c.after.Add(ObjectSize(out))
			c.streams.remember(out)
		}
		return out, err
	}
}

// identity is obj's weak pointer, if obj is a pointer (every object an
// informer is given is one; a value has no identity to remember).
func identity(obj any) (weak.Pointer[byte], bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return weak.Pointer[byte]{}, false
	}
	return weak.Make((*byte)(v.UnsafePointer())), true
}

// seen reports whether obj is an object the transform returned that has
// not entered the cache since, and forgets it.
func (w *streamWindows) seen(obj any) bool {
	id, ok := identity(obj)
	if !ok {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, found := w.given[id]
	delete(w.given, id)
	return found
}

// remember notes that the transform returned obj, sweeping out the
// collected objects once given has doubled since the last sweep.
func (w *streamWindows) remember(obj any) {
	id, ok := identity(obj)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.given == nil {
		w.given = map[weak.Pointer[byte]]struct{}{}
	}
	w.given[id] = struct{}{}
	if len(w.given) > 2*max(w.swept, 1024) {
		for k := range w.given {
			if k.Value() == nil {
				delete(w.given, k)
			}
		}
		w.swept = len(w.given)
	}
}

// Read is the estimate now, and before the transform (-1: no transform,
// or none of its results seen yet): the held bytes scaled by what the
// transform kept of the objects it was given since counting began;
// counting is false before Start.
func (c *CacheBytes) Read() (held, beforeTransform int64, counting bool) {
	held, beforeTransform = c.held.Load(), -1
	if c.transformed.Load() {
		if b, a := c.before.Load(), c.after.Load(); a > 0 {
			beforeTransform = int64(float64(held) * float64(b) / float64(a))
		}
	}
	return held, beforeTransform, c.on.Load()
}

// Holdings is what the page shows of what an informer holds beyond its
// count: b's estimate (-1 for what is not known: b nil, or not counting
// yet) and p's last relist (none: p nil, or no relist yet). Both live
// views fill their informer's line with it.
func Holdings(b *CacheBytes, p *ReflectorProbe) livepage.Holdings {
	h := livepage.Holdings{CachedBytes: -1, BytesBeforeTransform: -1}
	if b != nil {
		if held, before, counting := b.Read(); counting {
			h.CachedBytes, h.BytesBeforeTransform = held, before
		}
	}
	if p == nil {
		return h
	}
	if r, ok := p.LastRelist(); ok {
		pr := &livepage.ProcessRelist{Reason: r.Reason, StartedMillis: r.Started.UnixMilli(), DurationMillis: -1,
			Objects: r.Objects, EndUnseen: r.EndUnseen, PeakHeap: r.PeakHeap}
		if !r.Ended.IsZero() {
			pr.DurationMillis = r.Ended.Sub(r.Started).Milliseconds()
		}
		h.LastRelist = pr
	}
	return h
}

// heapSample is the runtime metric ReadHeap reads: the bytes of live and
// not yet swept heap objects, what a relist's second copy swells (no
// stop-the-world, unlike runtime.ReadMemStats).
var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

var heapMu sync.Mutex

// ReadHeap is the process's heap objects in bytes now, what a live view
// tells [ReflectorProbe.NoteHeap] once a second.
func ReadHeap() uint64 {
	heapMu.Lock()
	defer heapMu.Unlock()
	metrics.Read(heapSample)
	if heapSample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return heapSample[0].Value.Uint64()
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

// objectSizings counts ObjectSize's calls (an atomic add beside a walk of
// the object): a test's proof that a read of the page's state sizes
// nothing.
var objectSizings atomic.Int64

// ObjectSizings is how many objects this process has sized so far.
func ObjectSizings() int64 { return objectSizings.Load() }

// sizer is what a typed Kubernetes object answers: its protobuf encoding's
// length (generated code, no allocation).
type sizer interface{ Size() int }

// ObjectSize estimates the bytes obj holds on the heap; 0 for nil.
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
//
// Ours: client-go sizes nothing.
func ObjectSize(obj any) int64 {
	if obj == nil {
		return 0
	}
	objectSizings.Add(1)
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
