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
	"github.com/informer-anatomy/informer-anatomy/internal/chunkq"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// ReplacedAllInfo is the Object of a [ReplacedAll] delta: one whole LIST.
//
// Mirrors [k8s.io/client-go/tools/cache.ReplacedAllInfo] (the_real_fifo.go).
type ReplacedAllInfo struct {
	// ResourceVersion is the list's resourceVersion, as given to Replace.
	ResourceVersion string
	// Objects are the listed objects in list order, already transformed
	// when the queue has a Transformer.
	Objects []any
}

// BookmarkInfo is the Object of a [Bookmark] delta.
//
// Mirrors [k8s.io/client-go/tools/cache.BookmarkInfo] (the_real_fifo.go).
type BookmarkInfo struct {
	// ResourceVersion is the bookmark's resourceVersion, as given to Bookmark.
	ResourceVersion string
}

// SyncAllInfo is the Object of a [SyncAll] delta. It carries nothing: the
// objects to resync are whatever the consumer's cache holds when it
// processes the entry.
//
// Mirrors [k8s.io/client-go/tools/cache.SyncAllInfo] (the_real_fifo.go).
type SyncAllInfo struct{}

// ProcessBatchFunc processes several deltas popped together by
// [RealFIFO.PopBatch], oldest first, each for a different key; isInInitialList
// is the same for all of them (a batch never crosses the end of the initial
// list).
//
// Mirrors [k8s.io/client-go/tools/cache.ProcessBatchFunc] (controller.go).
type ProcessBatchFunc func(deltas []Delta, isInInitialList bool) error

// RealFIFOOptions configures a [RealFIFO]. [NewRealFIFOWithOptions] panics on
// the combinations upstream refuses: AtomicEvents with KnownObjects, or
// without AtomicEvents no KnownObjects, UnlockWhileProcessing or
// EmitDeltaTypeBookmark.
//
// Mirrors [k8s.io/client-go/tools/cache.RealFIFOOptions] (the_real_fifo.go),
// without Logger, Identifier and MetricsProvider (QueuedItems stands for
// the queue's one gauge), with TracerProvider.
type RealFIFOOptions struct {
	// Name is the queue's (informer's) name, in spans as informer.name.
	// Default "RealFIFO".
	Name string
	// KeyFunction keys objects; default store.MetaNamespaceKeyFunc.
	// Tombstones are keyed by their Key whatever this is.
	KeyFunction store.KeyFunc
	// KnownObjects is the consumer's cache, which a non-atomic Replace
	// reconciles against (tombstones for cached objects not listed) and a
	// non-atomic Resync replays. Required without AtomicEvents, forbidden
	// with it: an atomic queue leaves that work to the consumer.
	KnownObjects KeyListerGetter
	// Transformer, if set, rewrites objects as they are queued (not
	// tombstones and not resync entries, which come from the cache).
	Transformer TransformFunc
	// AtomicEvents makes Replace queue one ReplacedAll entry and Resync one
	// SyncAll entry, instead of one entry per object.
	AtomicEvents bool
	// UnlockWhileProcessing lets Pop and PopBatch release the lock while
	// the process func runs, so the reflector keeps queueing behind a slow
	// handler (kubernetes#103789). Requires AtomicEvents: with a
	// KnownObjects cache the queue would read the cache while the consumer
	// writes it.
	UnlockWhileProcessing bool
	// EmitDeltaTypeBookmark makes Bookmark queue a Bookmark entry (otherwise
	// it is a no-op). Requires AtomicEvents.
	EmitDeltaTypeBookmark bool
	// TracerProvider for the per-delta spans; default the global one.
	TracerProvider trace.TracerProvider
	// TraceFilter, if set, selects the objects whose entries are traced
	// (see [TraceFilter]); nil traces all. Ours, not client-go's.
	TraceFilter TraceFilter
	// RelistCache, if set, is the consumer's cache (the informer's
	// indexer), which ReuseRelisted reads during a relist to hand back the
	// cached object for a relisted one that has not changed (same UID and
	// resourceVersion), so the relist holds no second copy of it (see
	// [reflector.ReusingStore]). Allowed with AtomicEvents: it is only
	// read, by key, on the reflector's goroutine, never by Replace or
	// Resync, and it must be safe for that while the consumer writes it
	// (a store.Indexer is). Without AtomicEvents, KnownObjects is used
	// when this is nil. Ours: client-go has no counterpart.
	RelistCache KeyGetter
	// QueuedItems, if set, is told the number of queued entries each time
	// it changes (an entry queued or popped), under the queue's lock: where
	// client-go's RealFIFO sets its informer_queued_items gauge
	// (f.metrics.numberOfQueuedItem.Set(len(f.items)), the_real_fifo.go).
	// It must be quick and must not call the queue. Ours: client-go builds
	// the gauge from its Identifier and MetricsProvider.
	QueuedItems func(n int)
}

// realFIFOBatchSize is the most deltas one PopBatch hands out, and half the
// queue length up to which an unlocking queue releases its lock while
// processing.
//
// Mirrors defaultBatchSize in client-go's the_real_fifo.go.
const realFIFOBatchSize = 1000

// RealFIFO is a queue that hands out every change in the order it arrived:
// one entry per Add, Update, Delete, listed object or tombstone, never
// merged with another change of the same key. Where the [DeltaFIFO] keeps
// one place in line per key and pops a key's whole history at once, the
// RealFIFO pops one entry at a time (Pop) or a run of entries for distinct
// keys (PopBatch), so a handler sees the API server's order across keys.
//
// In atomic mode (AtomicEvents) a relist is one [ReplacedAll] entry and a
// resync one [SyncAll] entry, which the consumer expands against its own
// cache; the queue then needs no view of that cache, which is what lets it
// release its lock while the consumer processes (UnlockWhileProcessing), so
// the reflector keeps queueing behind a slow handler.
//
// One consumer pops. client-go leaves that to the caller; here a second
// concurrent Pop or PopBatch waits until the running process call returns,
// so two process calls never overlap even while the lock is released.
//
// Mirrors [k8s.io/client-go/tools/cache.RealFIFO] (the_real_fifo.go),
// without slow-pop logging, and with its one gauge as a callback
// (RealFIFOOptions.QueuedItems).
type RealFIFO struct {
	lock sync.Mutex
	// cond wakes a waiting Pop when an entry is queued, the queue is
	// closed, or a process call that ran unlocked returns.
	cond sync.Cond
	// Guarded by lock:

	// ends are the spans ended while the lock was held; unlock ends them
	// once it is released (see spanEnds). Always empty when not tracing.
	ends spanEnds
	// items are the queued entries, oldest first, in fixed-size chunks;
	// see newStorage.
	items chunkq.Queue[Delta]
	// populated: the first Replace, or any Add/Update/Delete, has happened.
	populated bool
	// initialPopulationCount is how many entries of the first Replace are
	// still queued or being processed; PopBatch never batches past them.
	initialPopulationCount int
	// synced latches populated && initialPopulationCount == 0. Invariant:
	// synced == (populated && initialPopulationCount == 0), and syncedCh
	// (HasSyncedChecker's Done) is closed iff synced.
	synced   bool
	syncedCh chan struct{}
	closed   bool
	// dropped: endQueuedAsDropped ran; nothing is queued or popped again.
	dropped bool
	// processing: a process call is running with the lock released; a
	// second consumer waits for it.
	processing bool
	// batchKeys is PopBatch's scratch set of the keys in the batch being
	// built, kept between calls so a pop does not allocate a map.
	batchKeys map[string]struct{}

	keyFunc               store.KeyFunc
	knownObjects          KeyListerGetter // nil in atomic mode
	relistCache           KeyGetter       // for ReuseRelisted; nil: reuses nothing
	transformer           TransformFunc
	batchSize             int
	atomicEvents          bool
	unlockWhileProcessing bool
	emitBookmarks         bool
	name                  string
	tp                    trace.TracerProvider // nil: the global one
	tracer                trace.Tracer
	nameAttr              attribute.KeyValue
	traceFilter           TraceFilter
	queuedItems           func(int) // nil: nobody is told
}

// A RealFIFO is a Queue, and offers the reflector (chapter 3) the optional
// store interfaces it looks for: writes with its cycle context, bookmarks.
var (
	_ Queue                            = &RealFIFO{}
	_ reflector.ContextStore           = &RealFIFO{}
	_ reflector.ReflectorBookmarkStore = &RealFIFO{}
	_ reflector.TransformingStore      = &RealFIFO{}
)

// Transformer returns the queue's transformer (nil if none), for the
// reflector's streamed list; see [DeltaFIFO.Transformer]. A streamed
// object is transformed as it arrives and again in Replace
// (enqueueReplacedAll_locked or the per-object entries), as upstream's is;
// for an object a relist finds unchanged in the cache, the second call
// comes from ReuseRelisted as the object arrives instead.
//
// Mirrors [k8s.io/client-go/tools/cache.RealFIFO.Transformer] (the_real_fifo.go).
func (f *RealFIFO) Transformer() TransformFunc { return f.transformer }

// NewRealFIFO returns a non-atomic RealFIFO: per-object relists and
// resyncs, reconciled against knownObjects (which must not be nil).
//
// Mirrors [k8s.io/client-go/tools/cache.NewRealFIFO] (the_real_fifo.go).
//
// Deprecated: use [NewRealFIFOWithOptions], as upstream says.
func NewRealFIFO(keyFunc store.KeyFunc, knownObjects KeyListerGetter, transformer TransformFunc) *RealFIFO {
	return NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: keyFunc, KnownObjects: knownObjects, Transformer: transformer})
}

// NewRealFIFOWithOptions returns an empty RealFIFO. It panics, with
// upstream's messages, on the option combinations upstream refuses (see
// [RealFIFOOptions]): they are programming errors, and a queue built
// anyway would either read the consumer's cache while the consumer writes
// it unlocked, or interleave a bookmark with the per-object entries of a
// relist and so report a resourceVersion the cache has not reached.
//
// Mirrors [k8s.io/client-go/tools/cache.NewRealFIFOWithOptions] (the_real_fifo.go).
func NewRealFIFOWithOptions(opts RealFIFOOptions) *RealFIFO {
	if opts.AtomicEvents {
		if opts.KnownObjects != nil {
			panic("coding error: knownObjects must not be provided when AtomicEvents is true")
		}
	} else {
		if opts.UnlockWhileProcessing {
			panic("coding error: UnlockWhileProcessing must be false when AtomicEvents is false")
		}
		if opts.KnownObjects == nil {
			panic("coding error: knownObjects must be provided when AtomicEvents is false")
		}
		if opts.EmitDeltaTypeBookmark {
			panic("coding error: EmitDeltaTypeBookmark must be false when AtomicEvents is false")
		}
	}
	if opts.KeyFunction == nil {
		opts.KeyFunction = store.MetaNamespaceKeyFunc
	}
	if opts.Name == "" {
		opts.Name = "RealFIFO"
	}
	f := &RealFIFO{
		syncedCh:              make(chan struct{}),
		items:                 newStorage(),
		keyFunc:               opts.KeyFunction,
		knownObjects:          opts.KnownObjects,
		transformer:           opts.Transformer,
		batchSize:             realFIFOBatchSize,
		atomicEvents:          opts.AtomicEvents,
		unlockWhileProcessing: opts.UnlockWhileProcessing,
		emitBookmarks:         opts.EmitDeltaTypeBookmark,
		name:                  opts.Name,
		tp:                    opts.TracerProvider,
		tracer:                tracing.Tracer(opts.TracerProvider, tracerName),
		nameAttr:              tracing.KeyInformerName.String(opts.Name),
		traceFilter:           opts.TraceFilter,
		queuedItems:           opts.QueuedItems,
	}
	switch {
	case opts.RelistCache != nil:
		f.relistCache = opts.RelistCache
	case opts.KnownObjects != nil:
		f.relistCache = opts.KnownObjects
	}
	f.cond.L = &f.lock
	return f
}

// Name is the queue's (informer's) name.
func (f *RealFIFO) Name() string { return f.name }

// KeyOf keys an object, a tombstone (by its Key), a Delta (by its object)
// or a Deltas (by its newest object).
func (f *RealFIFO) KeyOf(obj any) (string, error) {
	if d, ok := obj.(Deltas); ok {
		if len(d) == 0 {
			return "", store.KeyError{Obj: obj, Err: ErrZeroLengthDeltasObject}
		}
		obj = d.Newest().Object
	}
	if d, ok := obj.(Delta); ok {
		obj = d.Object
	}
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	return f.keyFunc(obj)
}

// Close wakes every waiting Pop, which returns ErrFIFOClosed once the queue
// is empty. Nothing queued is dropped: the consumer drains it.
func (f *RealFIFO) Close() {
	f.lock.Lock()
	defer f.unlock()
	f.closed = true
	f.cond.Broadcast()
}

// IsClosed reports whether Close was called.
func (f *RealFIFO) IsClosed() bool {
	f.lock.Lock()
	defer f.unlock()
	return f.closed
}

// HasSynced is true once every entry of the first Replace has been popped
// and processed, or at once if an Add, Update or Delete came before any
// Replace. The count drops only after a process call returns, so while the
// last initial entry is being processed (even unlocked) it is still false.
func (f *RealFIFO) HasSynced() bool {
	f.lock.Lock()
	defer f.unlock()
	return f.synced
}

// checkSynced_locked latches synced; call it after changing populated or
// initialPopulationCount.
func (f *RealFIFO) checkSynced_locked() {
	if !f.synced && f.populated && f.initialPopulationCount == 0 {
		f.synced = true
		close(f.syncedCh)
	}
}

// HasSyncedChecker returns a checker whose Done channel is closed when
// HasSynced becomes true, at that moment (no polling); pass it to [WaitFor].
//
// Mirrors [k8s.io/client-go/tools/cache.RealFIFO.HasSyncedChecker] (the_real_fifo.go).
func (f *RealFIFO) HasSyncedChecker() DoneChecker { return queueChecker{f.name, f.syncedCh} }

func (f *RealFIFO) len_locked() int { return f.items.Len() }

// push_locked queues d at the back and wakes a waiting Pop.
func (f *RealFIFO) push_locked(d Delta) {
	if f.dropped {
		// The informer has stopped and nothing will pop again: do not keep
		// the entry, but end its wait so its trace is not left open.
		if d.trace != nil {
			f.endWait(d, true)
		}
		return
	}
	f.items.Push(d)
	f.cond.Broadcast()
	if f.queuedItems != nil {
		f.queuedItems(f.items.Len())
	}
}

// take_locked removes the n oldest entries and returns them in a new
// n-long slice, oldest first.
func (f *RealFIFO) take_locked(n int) []Delta {
	out := f.items.PopFront(n, make([]Delta, 0, n))
	if f.queuedItems != nil {
		f.queuedItems(f.items.Len())
	}
	return out
}

// countPopped_locked retires n popped entries of the initial list, if any
// are left. Pop and PopBatch defer it until after the process call, so
// HasSynced stays false while the last of them is still being processed.
func (f *RealFIFO) countPopped_locked(n int) {
	if f.initialPopulationCount > 0 {
		f.initialPopulationCount -= n
		f.checkSynced_locked()
	}
}

// Add queues an Added entry.
func (f *RealFIFO) Add(obj any) error { return f.AddWithContext(context.Background(), obj) }

// Update queues an Updated entry.
func (f *RealFIFO) Update(obj any) error { return f.UpdateWithContext(context.Background(), obj) }

// Delete queues a Deleted entry. Unlike the DeltaFIFO's, it does not ask
// whether the object is known: every event the watch delivers is handed on.
func (f *RealFIFO) Delete(obj any) error { return f.DeleteWithContext(context.Background(), obj) }

// Replace queues a whole state (a streamed list at its bookmark, or a LIST's
// result); see ReplaceWithContext.
func (f *RealFIFO) Replace(list []any, resourceVersion string) error {
	return f.ReplaceWithContext(context.Background(), list, resourceVersion)
}

// Resync queues a resync; see ResyncWithContext.
func (f *RealFIFO) Resync() error { return f.ResyncWithContext(context.Background()) }

// Bookmark queues a Bookmark entry; see BookmarkWithContext.
func (f *RealFIFO) Bookmark(resourceVersion string) error {
	return f.BookmarkWithContext(context.Background(), resourceVersion)
}

// AddWithContext is Add; ctx carries the reflector's cycle span, which the
// entry's trace links to.
func (f *RealFIFO) AddWithContext(ctx context.Context, obj any) error {
	return f.enqueueWatched(ctx, Added, obj, "ADDED")
}

// UpdateWithContext is Update with the reflector's context.
func (f *RealFIFO) UpdateWithContext(ctx context.Context, obj any) error {
	return f.enqueueWatched(ctx, Updated, obj, "MODIFIED")
}

// DeleteWithContext is Delete with the reflector's context.
func (f *RealFIFO) DeleteWithContext(ctx context.Context, obj any) error {
	return f.enqueueWatched(ctx, Deleted, obj, "DELETED")
}

// enqueueWatched is Add, Update and Delete: a watch event (event names it
// for the trace) queued as one entry, transformed, after marking the queue
// populated.
func (f *RealFIFO) enqueueWatched(ctx context.Context, typ DeltaType, obj any, event string) error {
	f.lock.Lock()
	defer f.unlock()
	f.populated = true
	f.checkSynced_locked()
	return f.enqueue_locked(ctx, typ, obj, true, sourceWatch, event)
}

// enqueue_locked queues one per-object entry. transform is false for
// objects that come from the consumer's cache (resync entries), which were
// transformed on their way in; tombstones are never transformed either.
//
// Like upstream, Add, Update and Delete mark the queue populated before
// this can fail, so a refused object still ends the wait for an initial
// list that never came.
func (f *RealFIFO) enqueue_locked(ctx context.Context, typ DeltaType, obj any, transform bool, source, event string) error {
	key, err := f.KeyOf(obj)
	if err != nil {
		return store.KeyError{Obj: obj, Err: err}
	}
	written := obj // as it came, for its traceparent annotation
	if transform && f.transformer != nil {
		if _, tombstone := obj.(DeletedFinalStateUnknown); !tombstone {
			if obj, err = f.transformer(obj); err != nil {
				return err
			}
		}
	}
	d := Delta{Type: typ, Object: obj}
	if tracing.Enabled(f.tp) {
		d.trace = f.startEventRoot(ctx, obj, written, key, source, event)
	}
	f.push_locked(d)
	return nil
}

// ReplaceWithContext applies a whole state, streamed or LISTed (ctx says
// which: reflector.StreamedListFrom). In atomic mode it queues one
// ReplacedAll entry carrying the (transformed) list; the consumer finds the
// tombstones when it processes it. Otherwise it reconciles here, in this
// order: a tombstone for every queued key that is not listed (unless its
// newest entry is already a delete), a tombstone for every known key that is
// neither listed nor queued, then a Replaced entry per listed object in list
// order (upstream's order: first what went away, then what is there).
//
// The first Replace (before any Add, Update or Delete) makes everything
// then queued the initial list that HasSynced waits for, including any
// entries an earlier, failed Replace or a Resync left in the queue, as
// upstream counts them.
func (f *RealFIFO) ReplaceWithContext(ctx context.Context, list []any, resourceVersion string) error {
	f.lock.Lock()
	defer f.unlock()
	var err error
	if f.atomicEvents {
		err = f.enqueueReplacedAll_locked(ctx, list, resourceVersion)
	} else {
		err = f.reconcile_locked(ctx, list)
	}
	if err != nil {
		return err
	}
	if !f.populated {
		f.populated = true
		f.initialPopulationCount = f.len_locked()
		f.checkSynced_locked()
	}
	return nil
}

func (f *RealFIFO) enqueueReplacedAll_locked(ctx context.Context, list []any, resourceVersion string) error {
	objs := list
	if f.transformer != nil {
		// A new slice: the caller's list is not ours to rewrite.
		prepared := reflector.PreparedFrom(ctx)
		objs = make([]any, len(list))
		for i, obj := range list {
			if reflector.Prepared(prepared, i) {
				objs[i] = obj // ReuseRelisted transformed it already
				continue
			}
			t, err := f.transformer(obj)
			if err != nil {
				return err
			}
			objs[i] = t
		}
	}
	d := Delta{Type: ReplacedAll, Object: ReplacedAllInfo{ResourceVersion: resourceVersion, Objects: objs}}
	if tracing.Enabled(f.tp) {
		d.trace = f.startAtomicEntry(ctx, ReplacedAll, len(objs), resourceVersion)
		if d.trace != nil {
			d.trace.atomic.source, d.trace.atomic.arrived = f.streamedArrivals(ctx, list)
		}
	}
	f.push_locked(d)
	return nil
}

// reconcile_locked is the non-atomic Replace, as upstream's
// reconcileReplacement (the_real_fifo.go). Keys are checked before anything
// is queued, so a list with an unkeyable object queues nothing.
func (f *RealFIFO) reconcile_locked(ctx context.Context, list []any) error {
	source, arrived := replaceSource(ctx)
	listed := make(sets.Set[string], len(list))
	for _, obj := range list {
		key, err := f.KeyOf(obj)
		if err != nil {
			return store.KeyError{Obj: obj, Err: err}
		}
		listed.Insert(key)
	}

	// The newest queued entry of each queued key, keys in first-queued
	// order (a map alone would make the tombstones' order random).
	var queuedKeys []string
	newest := make(map[string]Delta, f.items.Len())
	for d := range f.items.All() {
		key, err := f.KeyOf(d.Object)
		if err != nil {
			return store.KeyError{Obj: d.Object, Err: err}
		}
		if _, seen := newest[key]; !seen {
			queuedKeys = append(queuedKeys, key)
		}
		newest[key] = d
	}
	for _, key := range queuedKeys {
		last := newest[key]
		if listed.Has(key) || last.Type == Deleted {
			// Listed: a queued delete followed by this listing is a
			// re-creation, and both must be delivered. Deleted: the
			// consumer will hear of it already.
			continue
		}
		if err := f.enqueue_locked(ctx, Deleted, DeletedFinalStateUnknown{Key: key, Obj: last.Object}, false, source, "TOMBSTONE"); err != nil {
			return fmt.Errorf("couldn't enqueue object: %w", err)
		}
	}
	// Known to the consumer, not listed and nothing queued: deleted while
	// the watch was down. A failed lookup still gets a tombstone, without
	// an object: a lost delete would be worse than an empty one.
	for _, key := range f.knownObjects.ListKeys() {
		if listed.Has(key) {
			continue
		}
		if _, queued := newest[key]; queued {
			continue
		}
		last, exists, err := f.knownObjects.GetByKey(key)
		if err != nil || !exists {
			last = nil
		}
		if err := f.enqueue_locked(ctx, Deleted, DeletedFinalStateUnknown{Key: key, Obj: last}, false, source, "TOMBSTONE"); err != nil {
			return fmt.Errorf("couldn't enqueue object: %w", err)
		}
	}
	prepared := reflector.PreparedFrom(ctx) // transformed already by ReuseRelisted
	for i, obj := range list {
		if err := f.enqueue_locked(withArrival(ctx, arrived, i), Replaced, obj, !reflector.Prepared(prepared, i), source, "LISTED"); err != nil {
			return fmt.Errorf("couldn't enqueue object: %w", err)
		}
	}
	return nil
}

// ResyncWithContext queues a resync. In atomic mode that is one SyncAll
// entry; otherwise a Sync entry for every known object whose key has
// nothing queued (a queued change will reach the consumer anyway, and a
// Sync behind it would carry the cache's older state).
//
// Where upstream's error for a failed Sync entry wraps the wrong (nil)
// error, this one wraps the real cause.
func (f *RealFIFO) ResyncWithContext(ctx context.Context) error {
	f.lock.Lock()
	defer f.unlock()
	if f.atomicEvents {
		d := Delta{Type: SyncAll, Object: SyncAllInfo{}}
		if tracing.Enabled(f.tp) {
			d.trace = f.startAtomicEntry(ctx, SyncAll, 0, "")
		}
		f.push_locked(d)
		return nil
	}
	if f.knownObjects == nil {
		return nil
	}
	queuedKeys := sets.New[string]()
	for d := range f.items.All() {
		key, err := f.KeyOf(d.Object)
		if err != nil {
			return store.KeyError{Obj: d, Err: err}
		}
		queuedKeys.Insert(key)
	}
	for _, key := range f.knownObjects.ListKeys() {
		if queuedKeys.Has(key) {
			continue
		}
		obj, exists, err := f.knownObjects.GetByKey(key)
		if err != nil || !exists {
			continue
		}
		if err := f.enqueue_locked(ctx, Sync, obj, false, sourceResync, "RESYNC"); err != nil {
			return fmt.Errorf("couldn't queue object: %w", err)
		}
	}
	return nil
}

// BookmarkWithContext queues a Bookmark entry if EmitDeltaTypeBookmark is
// set, and is a no-op otherwise. The entry is not traced: a traced queue
// records it as an event on the reflector's cycle span in ctx. A bookmark
// counts for neither populated nor HasSynced.
func (f *RealFIFO) BookmarkWithContext(ctx context.Context, resourceVersion string) error {
	if !f.emitBookmarks {
		return nil
	}
	f.lock.Lock()
	defer f.unlock()
	f.push_locked(Delta{Type: Bookmark, Object: BookmarkInfo{ResourceVersion: resourceVersion}})
	if tracing.Enabled(f.tp) {
		f.bookmarkEvent(ctx, resourceVersion)
	}
	return nil
}

// waitForEntries_locked waits until there is an entry to pop and no other
// process call is running unlocked; ErrFIFOClosed once closed and empty, or
// at once after endQueuedAsDropped.
func (f *RealFIFO) waitForEntries_locked() error {
	for {
		switch {
		case f.dropped:
			return ErrFIFOClosed
		case f.len_locked() == 0 && f.closed:
			return ErrFIFOClosed
		case f.len_locked() > 0 && !f.processing:
			return nil
		}
		f.cond.Wait()
	}
}

// Pop waits for an entry, removes the oldest, and calls process with it as
// a one-element Deltas. It returns that Deltas and process's error (the
// entry is not requeued). Once closed and empty, it returns ErrFIFOClosed.
//
// process runs under the queue's lock, except with UnlockWhileProcessing
// while fewer than two batches' worth of entries are queued; see
// whileProcessing_locked. Either way it must not call Pop or PopBatch.
func (f *RealFIFO) Pop(process PopProcessFunc) (any, error) {
	f.lock.Lock()
	defer f.unlock()
	if err := f.waitForEntries_locked(); err != nil {
		return nil, err
	}
	// Read before the count drops: the last initial entry is still initial.
	isInInitialList := !f.synced
	popped := Deltas(f.take_locked(1))
	defer f.countPopped_locked(1)
	if popped[0].trace != nil {
		f.endWait(popped[0], false)
	}
	return popped, f.whileProcessing_locked(process, nil, popped, isInInitialList)
}

// batchable reports whether entries of type t may share a PopBatch: the
// per-object types. ReplacedAll, SyncAll and Bookmark are popped alone.
func batchable(t DeltaType) bool {
	switch t {
	case Added, Updated, Deleted, Replaced, Sync:
		return true
	}
	return false
}

// PopBatch waits for an entry, then removes a run of the oldest entries
// and hands them to processBatch, or to processSingle (as a one-element
// Deltas) when the run is one entry long. The run holds at most the batch
// size (1,000 entries) and stops before
//
//   - the end of the initial list, while any of it is queued, so that every
//     entry of a batch has the same isInInitialList,
//   - an entry of a type that is not batchable (such an entry at the front
//     is popped alone),
//   - a second entry for a key already in the run, so that a batch never
//     holds two states of one object,
//
// and an entry whose key cannot be computed ends the run, included in it
// (so a broken entry leaves the queue, as it would with Pop). It returns
// the process func's error; ErrFIFOClosed once closed and empty.
//
// Locking as for Pop.
func (f *RealFIFO) PopBatch(processBatch ProcessBatchFunc, processSingle PopProcessFunc) error {
	f.lock.Lock()
	defer f.unlock()
	if err := f.waitForEntries_locked(); err != nil {
		return err
	}
	isInInitialList := !f.synced
	limit := min(f.items.Len(), f.batchSize)
	if f.initialPopulationCount > 0 {
		limit = min(limit, f.initialPopulationCount)
	}
	n := 1
	if limit > 1 {
		// With room for one entry only, the front entry is popped whatever
		// it is; otherwise build the run.
		n = f.batchRun_locked(limit)
	}
	deltas := f.take_locked(n)
	defer f.countPopped_locked(n)
	for _, d := range deltas {
		if d.trace != nil {
			f.endWait(d, false)
		}
	}
	if n == 1 {
		return f.whileProcessing_locked(processSingle, nil, deltas, isInInitialList)
	}
	return f.whileProcessing_locked(nil, processBatch, deltas, isInInitialList)
}

// batchRun_locked returns how many of the limit oldest entries (at least
// one) form the next batch, by the rules on PopBatch.
func (f *RealFIFO) batchRun_locked(limit int) int {
	if f.batchKeys == nil {
		f.batchKeys = make(map[string]struct{})
	}
	defer clear(f.batchKeys)
	i := 0
	for d := range f.items.All() {
		if i == limit {
			break
		}
		if !batchable(d.Type) {
			return max(i, 1)
		}
		key, err := f.KeyOf(d.Object) // not KeyOf(d): boxing a Delta allocates
		if err != nil {
			return i + 1
		}
		if _, dup := f.batchKeys[key]; dup {
			return i
		}
		f.batchKeys[key] = struct{}{}
		i++
	}
	return i
}

// whileProcessing_locked calls single (with Deltas) or batch, releasing the
// lock around the call when upstream's whileProcessing_locked does: with
// UnlockWhileProcessing and fewer than two batches' worth of entries still
// queued. Above that the lock stays held, so a reflector outrunning the
// consumer blocks instead of growing the queue without bound.
//
// While unlocked, processing is set so that a second consumer waits
// (upstream lets it run a second process call at the same time). The lock
// is retaken by a deferred call, so a panicking process func leaves the
// queue locked for its caller's deferred Unlock, as upstream does.
func (f *RealFIFO) whileProcessing_locked(single PopProcessFunc, batch ProcessBatchFunc, deltas []Delta, isInInitialList bool) error {
	if f.unlockWhileProcessing && f.len_locked() < 2*f.batchSize {
		f.processing = true
		f.unlock()
		defer f.relockAfterProcessing()
	}
	if batch != nil {
		return batch(deltas, isInInitialList)
	}
	return single(Deltas(deltas), isInInitialList)
}

func (f *RealFIFO) relockAfterProcessing() {
	f.lock.Lock()
	f.processing = false
	f.cond.Broadcast()
}

// endQueuedAsDropped ends the queue of a stopped informer: the controller
// calls it once the reflector and the process loop have returned. Every
// entry still queued ends its wait with informer.queue.dropped=true (a
// per-object entry its RealFIFO.queued span; an atomic entry its
// RealFIFO.ReplacedAll or RealFIFO.SyncAll span, as its per-object traces
// would only have been made while processing it), so a reader can tell
// "dropped at stop" from "lost". The queue is then emptied and closed for
// good: Pop and PopBatch return ErrFIFOClosed, and a later enqueue is
// discarded, so no wait span can end twice.
//
// client-go leaves a stopped informer's entries in the queue, where nobody
// pops them either; the difference cannot be seen through the informer.
func (f *RealFIFO) endQueuedAsDropped() {
	f.lock.Lock()
	defer f.unlock()
	for d := range f.items.All() {
		if d.trace != nil {
			f.endWait(d, true)
		}
	}
	// Nothing is queued again: let the chunks go.
	f.items = newStorage()
	f.dropped, f.closed = true, true
	f.cond.Broadcast()
}

// checkInvariant verifies, for tests, the invariants stated on the fields.
func (f *RealFIFO) checkInvariant() error {
	f.lock.Lock()
	defer f.unlock()
	if err := f.items.CheckInvariant(isZeroDelta); err != nil {
		return err
	}
	if f.synced != (f.populated && f.initialPopulationCount == 0) {
		return fmt.Errorf("synced %v, populated %v, initialPopulationCount %d", f.synced, f.populated, f.initialPopulationCount)
	}
	if f.initialPopulationCount < 0 || f.initialPopulationCount > f.len_locked() {
		return fmt.Errorf("initialPopulationCount %d with %d queued", f.initialPopulationCount, f.len_locked())
	}
	if f.processing {
		return fmt.Errorf("processing set with no process call running")
	}
	return nil
}

// deltaChunkSize is how many entries one chunk of a [RealFIFO]'s storage
// holds: 512 Deltas, 20 KiB on 64-bit. Small enough that an idle queue
// (one chunk, perhaps a spare) costs little, large enough that a backlog
// of tens of thousands needs only a hundred or so allocations, and that a
// 1,000-entry batch spans at most three chunks.
const deltaChunkSize = 512

// newStorage is a RealFIFO's empty storage: entries in chunks (see
// internal/chunkq for why not one growing slice, as upstream's), keeping
// one emptied chunk spare, so that a backlog that rises and falls across a
// chunk boundary does not allocate a chunk each time; more would be
// memory a drained queue keeps for nothing.
func newStorage() chunkq.Queue[Delta] {
	return chunkq.Queue[Delta]{ChunkSize: deltaChunkSize, MaxSpares: 1}
}

// isZeroDelta says whether a storage slot is empty, for checkInvariant.
func isZeroDelta(d Delta) bool { return d.Object == nil && d.Type == "" && d.trace == nil }

// unlock releases the lock, then ends the spans ended under it: a span
// processor, or an exporter behind a synchronous one, never runs while the
// queue is locked (see spanEnds).
func (f *RealFIFO) unlock() {
	ends := f.ends
	f.ends = nil
	f.lock.Unlock()
	ends.endAll()
}
