package deltafifo

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/util/sets"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

const tracerName = "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"

// DeltaFIFOOptions configures a DeltaFIFO.
//
// Mirrors [k8s.io/client-go/tools/cache.DeltaFIFOOptions] (delta_fifo.go),
// without Logger, with TracerProvider.
type DeltaFIFOOptions struct {
	// Name is the informer's name in spans (informer.name). Default "DeltaFIFO".
	Name string
	// KeyFunction keys objects; default store.MetaNamespaceKeyFunc.
	// Tombstones are keyed by their Key whatever this is.
	KeyFunction store.KeyFunc
	// KnownObjects is the informer's cache. With it, Replace queues
	// tombstones for cached objects missing from the relist, Delete of a
	// cached object is queued, and Resync has something to resync. Without
	// it, the queue only knows what is queued.
	KnownObjects KeyListerGetter
	// EmitDeltaTypeReplaced makes Replace queue Replaced deltas instead of
	// Sync, so a handler can tell a relist from a resync. Shared informers
	// set it.
	EmitDeltaTypeReplaced bool
	// Transformer, if set, rewrites objects as they are queued (not
	// tombstones, not resync entries, which come from the cache and were
	// transformed on their way in).
	Transformer TransformFunc
	// TracerProvider for the per-delta spans; default the global one.
	TracerProvider trace.TracerProvider
	// TraceFilter, if set, selects the objects whose deltas are traced
	// (see [TraceFilter]); nil traces all. Ours, not client-go's.
	TraceFilter TraceFilter
}

// DeltaFIFO is a queue of keys, each with the list of changes (Deltas)
// that happened to its object since it was last popped.
//
// A producer (the reflector) calls Add, Update, Delete, Replace and Resync;
// one consumer calls Pop and gets all of a key's pending deltas at once. Two
// properties follow, and everything built on the queue relies on them:
//
//   - a key appears once in the queue however many changes it has, and keeps
//     its place in line while changes accumulate (no starvation, no reordering
//     of keys);
//   - the consumer sees every change, in order, except that two consecutive
//     deletes of the same object collapse into one.
//
// Mirrors [k8s.io/client-go/tools/cache.DeltaFIFO] (delta_fifo.go).
type DeltaFIFO struct {
	lock sync.RWMutex
	// cond wakes Pop when a key is queued or the queue is closed.
	cond sync.Cond
	// Guarded by lock:

	// ends are the spans ended while the lock was held; unlock ends them
	// once it is released (see spanEnds). Always empty when not tracing.
	ends spanEnds
	// items and queue hold the same keys. Invariant: a key is in queue iff
	// it is in items, exactly once, and its Deltas are not empty.
	items map[string]Deltas
	queue []string
	// populated: the first Replace, or any Add/Update/Delete, has happened.
	populated bool
	// initialPopulationCount is how many keys of the first Replace are still
	// queued; HasSynced once populated and it reaches 0.
	initialPopulationCount int
	// syncedCh is closed, once, when hasSynced_locked first becomes true
	// (checkSynced_locked): HasSyncedChecker's Done. Invariant: it is closed
	// iff syncedClosed, and syncedClosed == hasSynced_locked() at every
	// unlock.
	syncedCh     chan struct{}
	syncedClosed bool
	closed       bool
	// tracedQueued is how many queued deltas carry a trace whose
	// DeltaFIFO.queued span has not been ended yet. endQueuedAsDropped
	// walks the queue only when it is above 0, so an untraced informer
	// pays nothing at stop.
	tracedQueued int

	keyFunc               store.KeyFunc
	knownObjects          KeyListerGetter
	emitDeltaTypeReplaced bool
	transformer           TransformFunc
	name                  string
	tp                    trace.TracerProvider // nil: the global one
	tracer                trace.Tracer
	nameAttr              attribute.KeyValue
	traceFilter           TraceFilter
}

// A DeltaFIFO is a Queue, and hands its transformer to the reflector
// (chapter 3), which slims a streamed list with it as each object arrives.
var (
	_ Queue                       = &DeltaFIFO{}
	_ reflector.TransformingStore = &DeltaFIFO{}
)

// NewDeltaFIFOWithOptions returns an empty DeltaFIFO.
//
// Mirrors [k8s.io/client-go/tools/cache.NewDeltaFIFOWithOptions] (delta_fifo.go).
func NewDeltaFIFOWithOptions(opts DeltaFIFOOptions) *DeltaFIFO {
	if opts.KeyFunction == nil {
		opts.KeyFunction = store.MetaNamespaceKeyFunc
	}
	if opts.Name == "" {
		opts.Name = "DeltaFIFO"
	}
	f := &DeltaFIFO{
		items:                 map[string]Deltas{},
		syncedCh:              make(chan struct{}),
		keyFunc:               opts.KeyFunction,
		knownObjects:          opts.KnownObjects,
		emitDeltaTypeReplaced: opts.EmitDeltaTypeReplaced,
		transformer:           opts.Transformer,
		name:                  opts.Name,
		tp:                    opts.TracerProvider,
		tracer:                tracing.Tracer(opts.TracerProvider, tracerName),
		nameAttr:              tracing.KeyInformerName.String(opts.Name),
		traceFilter:           opts.TraceFilter,
	}
	f.cond.L = &f.lock
	return f
}

// NewDeltaFIFO is NewDeltaFIFOWithOptions with a key function and known
// objects.
//
// Mirrors [k8s.io/client-go/tools/cache.NewDeltaFIFO] (delta_fifo.go).
func NewDeltaFIFO(keyFunc store.KeyFunc, knownObjects KeyListerGetter) *DeltaFIFO {
	return NewDeltaFIFOWithOptions(DeltaFIFOOptions{KeyFunction: keyFunc, KnownObjects: knownObjects})
}

// Name is the queue's (informer's) name.
func (f *DeltaFIFO) Name() string { return f.name }

// Transformer returns the queue's transformer (nil if none). A reflector
// streaming the initial state (chapter 3's watchList) applies it to each
// object as it arrives in its temporary store, so a large first sync is
// held slimmed, not whole, until the bookmark; Replace then applies it once
// more, as upstream's does, which is why a transformer should be
// idempotent. (For an object a relist finds unchanged in the cache, that
// second call comes from ReuseRelisted as the object arrives instead.)
//
// Mirrors [k8s.io/client-go/tools/cache.DeltaFIFO.Transformer] (delta_fifo.go),
// which makes it a [k8s.io/client-go/tools/cache.TransformingStore].
func (f *DeltaFIFO) Transformer() TransformFunc { return f.transformer }

// KeyOf keys an object, a tombstone (by its Key) or a Deltas (by its newest
// object).
func (f *DeltaFIFO) KeyOf(obj any) (string, error) {
	if d, ok := obj.(Deltas); ok {
		if len(d) == 0 {
			return "", store.KeyError{Obj: obj, Err: ErrZeroLengthDeltasObject}
		}
		obj = d.Newest().Object
	}
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	return f.keyFunc(obj)
}

// Close wakes every blocked Pop, which returns ErrFIFOClosed once the queue
// is empty. Nothing queued is dropped.
func (f *DeltaFIFO) Close() {
	f.lock.Lock()
	defer f.unlock()
	f.closed = true
	f.cond.Broadcast()
}

// IsClosed reports whether Close was called.
func (f *DeltaFIFO) IsClosed() bool {
	f.lock.Lock()
	defer f.unlock()
	return f.closed
}

// HasSynced is true once the first Replace's keys have all been popped, or
// at once if an Add, Update or Delete came before any Replace. It is what
// WaitForCacheSync waits for: "everything in the initial list has been
// handed to the consumer".
func (f *DeltaFIFO) HasSynced() bool {
	f.lock.Lock()
	defer f.unlock()
	return f.hasSynced_locked()
}

func (f *DeltaFIFO) hasSynced_locked() bool {
	return f.populated && f.initialPopulationCount == 0
}

// checkSynced_locked closes syncedCh the first time the queue has synced;
// call it after changing populated or initialPopulationCount. Closing at
// the moment of the change, under the lock, is what lets a waiter react
// without polling HasSynced.
func (f *DeltaFIFO) checkSynced_locked() {
	if !f.syncedClosed && f.hasSynced_locked() {
		f.syncedClosed = true
		close(f.syncedCh)
	}
}

// HasSyncedChecker returns a checker whose Done channel is closed when
// HasSynced becomes true; pass it to [WaitFor].
//
// Mirrors [k8s.io/client-go/tools/cache.DeltaFIFO.HasSyncedChecker] (delta_fifo.go).
func (f *DeltaFIFO) HasSyncedChecker() DoneChecker { return queueChecker{f.name, f.syncedCh} }

// Add queues an Added delta.
func (f *DeltaFIFO) Add(obj any) error { return f.AddWithContext(context.Background(), obj) }

// Update queues an Updated delta.
func (f *DeltaFIFO) Update(obj any) error { return f.UpdateWithContext(context.Background(), obj) }

// Delete queues a Deleted delta, unless the object is neither queued nor
// known (then there is nothing to tell anyone, and it is a no-op).
func (f *DeltaFIFO) Delete(obj any) error { return f.DeleteWithContext(context.Background(), obj) }

// Replace queues a whole state (a streamed list at its bookmark, or a LIST's
// result); see ReplaceWithContext.
func (f *DeltaFIFO) Replace(list []any, rv string) error {
	return f.ReplaceWithContext(context.Background(), list, rv)
}

// Resync queues a Sync for each known object; see ResyncWithContext.
func (f *DeltaFIFO) Resync() error { return f.ResyncWithContext(context.Background()) }

// AddWithContext is Add; ctx carries the reflector's cycle span, which the
// delta's trace links to.
func (f *DeltaFIFO) AddWithContext(ctx context.Context, obj any) error {
	f.lock.Lock()
	defer f.unlock()
	f.populated = true
	f.checkSynced_locked()
	return f.queueAction_locked(ctx, Added, Added, obj, sourceWatch, "ADDED")
}

// UpdateWithContext is Update with the reflector's context.
func (f *DeltaFIFO) UpdateWithContext(ctx context.Context, obj any) error {
	f.lock.Lock()
	defer f.unlock()
	f.populated = true
	f.checkSynced_locked()
	return f.queueAction_locked(ctx, Updated, Updated, obj, sourceWatch, "MODIFIED")
}

// DeleteWithContext is Delete with the reflector's context.
func (f *DeltaFIFO) DeleteWithContext(ctx context.Context, obj any) error {
	key, err := f.KeyOf(obj)
	if err != nil {
		return store.KeyError{Obj: obj, Err: err}
	}
	f.lock.Lock()
	defer f.unlock()
	f.populated = true
	f.checkSynced_locked()
	_, queued := f.items[key]
	if f.knownObjects == nil {
		if !queued {
			return nil
		}
	} else if _, known, err := f.knownObjects.GetByKey(key); err == nil && !known && !queued {
		// A lookup error counts as "maybe known": better a spurious delete
		// than a lost one.
		return nil
	}
	return f.queueAction_locked(ctx, Deleted, Deleted, obj, sourceWatch, "DELETED")
}

// queueAction_locked appends a delta for obj's key, queueing the key if it
// was not queued. internal is the action for the transformer's purposes:
// Replace's deltas count as Replaced even when recorded as Sync.
func (f *DeltaFIFO) queueAction_locked(ctx context.Context, action, internal DeltaType, obj any, source, event string) error {
	key, err := f.KeyOf(obj)
	if err != nil {
		return store.KeyError{Obj: obj, Err: err}
	}
	written := obj // as it came, for its traceparent annotation
	if f.transformer != nil {
		// Tombstones wrap an object that was transformed when it was queued;
		// Sync objects come from the cache, transformed already.
		if _, tombstone := obj.(DeletedFinalStateUnknown); !tombstone && internal != Sync {
			if obj, err = f.transformer(obj); err != nil {
				return err
			}
		}
	}
	d := Delta{Type: action, Object: obj}
	if tracing.Enabled(f.tp) {
		d.trace = f.startRoot(ctx, obj, written, key, source, event)
	}

	old, queued := f.items[key]
	var prev Delta // the newest queued delta, before dedupDeltas may overwrite it
	if len(old) > 0 {
		prev = old[len(old)-1]
	}
	deltas := dedupDeltas(append(old, d))
	if len(deltas) == len(old) {
		// dedupDeltas collapsed two deletes into one. The one it dropped
		// may carry a trace whose root is already exported; the kept one
		// takes it along, so it is not lost (see deltaTrace.merged).
		kept := &deltas[len(deltas)-1]
		dropped := d
		if _, tombstone := prev.Object.(DeletedFinalStateUnknown); tombstone {
			dropped = prev // dedupDeltas keeps the real delete over a tombstone
		}
		hadTrace := prev.trace != nil
		kept.trace = mergeTraces(kept.trace, dropped.trace)
		if kept.trace != nil && !hadTrace {
			f.tracedQueued++
		}
	} else if d.trace != nil {
		f.tracedQueued++
	}
	if !queued {
		f.queue = append(f.queue, key)
	}
	f.items[key] = deltas
	f.cond.Broadcast()
	return nil
}

// dedupDeltas collapses the last two deltas when both are deletes: the same
// object cannot be deleted twice, and a handler told twice might act twice.
// The older one is kept (it has the real last state), unless it is a
// tombstone and the newer one is not.
//
// Only the last two, and only deletes: collapsing updates would hide
// intermediate states a handler may need, and is not what upstream does.
func dedupDeltas(deltas Deltas) Deltas {
	n := len(deltas)
	if n < 2 {
		return deltas
	}
	newer, older := deltas[n-1], deltas[n-2]
	if older.Type != Deleted || newer.Type != Deleted {
		return deltas
	}
	if _, tombstone := older.Object.(DeletedFinalStateUnknown); tombstone {
		deltas[n-2] = newer
	}
	return deltas[:n-1]
}

// Pop waits for a key, removes it and its Deltas from the queue, and calls
// process with them (under the queue's lock, so nothing else is queued or
// popped meanwhile; process must not call back into the queue). It returns
// the Deltas and process's error. Once closed and empty, it returns
// ErrFIFOClosed.
//
// A process error does not requeue the item. Older DeltaFIFOs did, for an
// ErrRequeue error; v0.37.2 no longer defines that type (only a stale comment
// on Queue.Pop in fifo.go still mentions it).
func (f *DeltaFIFO) Pop(process PopProcessFunc) (any, error) {
	f.lock.Lock()
	defer f.unlock()
	if err := f.waitForItems_locked(); err != nil {
		return nil, err
	}
	return f.popOne_locked(process)
}

// PopKeys is Pop for up to max keys at once: it waits for a key, then pops
// every queued key (up to max), one after another, each exactly as Pop
// would, under one hold of the lock. It returns how many it popped and the
// first process error (the rest are still popped and processed).
//
// Not in client-go's DeltaFIFO: it borrows the idea of the RealFIFO's
// PopBatch (client-go's default informer path since 1.35), under a name of
// its own, because it is not that method: PopBatch hands a run of entries
// to one batch call, PopKeys calls process once per key. Each pop costs a
// lock hand-over and usually a goroutine wake-up between the reflector and
// the consumer; popping what is already queued in one go saves those, and
// changes nothing a consumer can observe: the same keys, in the same order,
// with the same Deltas and isInInitialList.
func (f *DeltaFIFO) PopKeys(process PopProcessFunc, max int) (int, error) {
	f.lock.Lock()
	defer f.unlock()
	if err := f.waitForItems_locked(); err != nil {
		return 0, err
	}
	var first error
	n := 0
	for ; n < max && len(f.queue) > 0; n++ {
		if _, err := f.popOne_locked(process); err != nil && first == nil {
			first = err
		}
	}
	return n, first
}

func (f *DeltaFIFO) waitForItems_locked() error {
	for len(f.queue) == 0 {
		if f.closed {
			return ErrFIFOClosed
		}
		f.cond.Wait()
	}
	return nil
}

func (f *DeltaFIFO) popOne_locked(process PopProcessFunc) (any, error) {
	// Read before the count drops: the last key of the initial list is
	// still part of it.
	isInInitialList := !f.hasSynced_locked()
	key := f.queue[0]
	f.queue = f.queue[1:]
	if f.initialPopulationCount > 0 {
		f.initialPopulationCount--
		f.checkSynced_locked()
	}
	deltas := f.items[key]
	delete(f.items, key)
	if f.tracedQueued > 0 {
		f.tracedQueued -= f.endQueued(key, deltas, false)
	}
	return deltas, process(deltas, isInInitialList)
}

// endQueuedAsDropped is the queue's part in an informer's stop: the
// controller calls it once the reflector and the process loop have both
// returned, so nothing can be queued or popped any more. Each delta still queued gets its
// DeltaFIFO.queued span, ended now with informer.queue.dropped=true (the
// span contract's rule for deltas queued at stop): without it, a reader of
// the traces could not tell "dropped because the informer stopped" from
// "lost on the way".
//
// The queue is then closed and emptied, so a later Pop returns
// ErrFIFOClosed rather than hand out a delta whose trace already says it was
// dropped, and no wait span is ended twice. client-go leaves the deltas of a
// stopped informer in its queue; nobody pops them there either (a stopped
// informer cannot be started again), so the difference is not observable
// through the informer.
//
// With tracing off (no traced delta queued) it does not walk the queue.
func (f *DeltaFIFO) endQueuedAsDropped() {
	f.lock.Lock()
	defer f.unlock()
	if f.tracedQueued > 0 {
		for _, key := range f.queue {
			f.endQueued(key, f.items[key], true)
		}
		f.tracedQueued = 0
	}
	f.items = map[string]Deltas{}
	f.queue = nil
	f.closed = true
	f.cond.Broadcast()
}

// ReplaceWithContext applies a whole state, streamed or LISTed (ctx says
// which: reflector.StreamedListFrom): for each listed object a Replaced (or
// Sync) delta; then a tombstone (Deleted with DeletedFinalStateUnknown) for
// every key that is queued or known but was not listed, because the object
// was deleted while the watch was down and its DELETED event will never
// come. The first Replace also sets how many keys HasSynced waits for.
func (f *DeltaFIFO) ReplaceWithContext(ctx context.Context, list []any, _ string) error {
	f.lock.Lock()
	defer f.unlock()
	action, event := Sync, "LISTED"
	if f.emitDeltaTypeReplaced {
		action = Replaced
	}
	source, arrived := replaceSource(ctx)
	listed := sets.New[string]()
	prepared := reflector.PreparedFrom(ctx)
	for i, item := range list {
		key, err := f.KeyOf(item)
		if err != nil {
			return store.KeyError{Obj: item, Err: err}
		}
		listed.Insert(key)
		// internal Sync skips the transform, as for a resync's cached
		// object: ReuseRelisted has transformed a prepared item already.
		internal := Replaced
		if reflector.Prepared(prepared, i) {
			internal = Sync
		}
		if err := f.queueAction_locked(withArrival(ctx, arrived, i), action, internal, item, source, event); err != nil {
			return fmt.Errorf("couldn't enqueue object: %v", err)
		}
	}

	tombstones := 0
	// Queued but not listed: the tombstone carries the newest queued state.
	for key, deltas := range f.items {
		if listed.Has(key) {
			continue
		}
		var last any
		if n := deltas.Newest(); n != nil {
			last = n.Object
			if d, ok := last.(DeletedFinalStateUnknown); ok {
				last = d.Obj
			}
		}
		tombstones++
		if err := f.queueAction_locked(ctx, Deleted, Deleted, DeletedFinalStateUnknown{Key: key, Obj: last}, source, "TOMBSTONE"); err != nil {
			return err
		}
	}
	// Known (in the informer's cache), not listed and not queued: the
	// tombstone carries the cached state. A lookup that fails still gets a
	// tombstone, without an object: losing the delete would be worse.
	if f.knownObjects != nil {
		for _, key := range f.knownObjects.ListKeys() {
			if listed.Has(key) || len(f.items[key]) > 0 {
				continue
			}
			last, exists, err := f.knownObjects.GetByKey(key)
			if err != nil || !exists {
				last = nil
			}
			tombstones++
			if err := f.queueAction_locked(ctx, Deleted, Deleted, DeletedFinalStateUnknown{Key: key, Obj: last}, source, "TOMBSTONE"); err != nil {
				return err
			}
		}
	}
	if !f.populated {
		f.populated = true
		f.initialPopulationCount = listed.Len() + tombstones
		f.checkSynced_locked()
	}
	return nil
}

// ResyncWithContext queues a Sync delta for every known object whose key has
// nothing pending: a key with pending deltas will reach the handlers anyway,
// and a Sync behind them would replay a stale state.
func (f *DeltaFIFO) ResyncWithContext(ctx context.Context) error {
	f.lock.Lock()
	defer f.unlock()
	if f.knownObjects == nil {
		return nil
	}
	for _, key := range f.knownObjects.ListKeys() {
		obj, exists, err := f.knownObjects.GetByKey(key)
		if err != nil || !exists {
			continue
		}
		id, err := f.KeyOf(obj)
		if err != nil {
			return store.KeyError{Obj: obj, Err: err}
		}
		if len(f.items[id]) > 0 {
			continue
		}
		if err := f.queueAction_locked(ctx, Sync, Sync, obj, sourceResync, "RESYNC"); err != nil {
			return fmt.Errorf("couldn't queue object: %v", err)
		}
	}
	return nil
}

// checkInvariant verifies, for tests, the invariant stated on items and
// queue.
func (f *DeltaFIFO) checkInvariant() error {
	f.lock.Lock()
	defer f.unlock()
	if len(f.queue) != len(f.items) {
		return fmt.Errorf("queue has %d keys, items %d", len(f.queue), len(f.items))
	}
	seen := make(map[string]bool, len(f.queue))
	for _, k := range f.queue {
		if seen[k] {
			return fmt.Errorf("key %q queued twice", k)
		}
		seen[k] = true
		if len(f.items[k]) == 0 {
			return fmt.Errorf("key %q queued with no deltas", k)
		}
	}
	return nil
}

// unlock releases the lock, then ends the spans ended under it (see
// spanEnds). It covers the enqueue side, the reflector's: a slow collector
// cannot slow its Adds. Pop's wait spans and whatever the process function
// ends still end under the lock, because the DeltaFIFO calls process with
// its lock held, as upstream's does.
func (f *DeltaFIFO) unlock() {
	ends := f.ends
	f.ends = nil
	f.lock.Unlock()
	ends.endAll()
}
