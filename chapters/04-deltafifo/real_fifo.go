package deltafifo

import (
	"go.opentelemetry.io/otel/trace"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
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
// without Logger, Identifier and MetricsProvider, with TracerProvider.
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
}
