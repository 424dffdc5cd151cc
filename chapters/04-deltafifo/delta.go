package deltafifo

import (
	"errors"
	"time"

	"go.opentelemetry.io/otel/trace"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
)

// DeltaType is the kind of change a Delta records.
//
// Mirrors [k8s.io/client-go/tools/cache.DeltaType] (delta_fifo.go).
type DeltaType string

// The delta types. The DeltaFIFO produces the first five; ReplacedAll,
// SyncAll and Bookmark are produced only by a [RealFIFO] (the first two
// with AtomicEvents, the last with EmitDeltaTypeBookmark), and each of them
// is a whole-queue entry rather than a change to one object.
//
// Mirrors the DeltaType constants of [k8s.io/client-go/tools/cache]
// (delta_fifo.go).
const (
	Added   DeltaType = "Added"
	Updated DeltaType = "Updated"
	Deleted DeltaType = "Deleted"
	// Replaced is an object seen in a relist, when EmitDeltaTypeReplaced is
	// set; without it a relist produces Sync, which looks like a resync.
	// A non-atomic RealFIFO always uses Replaced.
	Replaced DeltaType = "Replaced"
	// Sync is a periodic resync of an object, or (see Replaced) a relisted one.
	Sync DeltaType = "Sync"
	// ReplacedAll is a whole relist as one entry: its Object is a
	// [ReplacedAllInfo] with every listed object. The consumer works out
	// the tombstones against its cache when it processes the entry, so the
	// queue needs no view of the cache (and may unlock while processing).
	ReplacedAll DeltaType = "ReplacedAll"
	// SyncAll is a whole resync as one entry: its Object is a
	// [SyncAllInfo]; the consumer replays every cached object.
	SyncAll DeltaType = "SyncAll"
	// Bookmark carries a resourceVersion the watch reached, in queue order,
	// as a [BookmarkInfo]; no object changed.
	Bookmark DeltaType = "Bookmark"
)

// Delta is one change to one object: its type and the object after it (for
// Deleted, the object's last known state, or a [DeletedFinalStateUnknown]).
//
// Mirrors [k8s.io/client-go/tools/cache.Delta] (delta_fifo.go). The
// unexported field carries the delta's trace to whoever pops it; it is nil
// when tracing is off, so an untraced Delta is one word larger than
// upstream's. Because of it, upstream's unkeyed literal Delta{Added, obj}
// does not compile here: write Delta{Type: Added, Object: obj}.
type Delta struct {
	Type   DeltaType
	Object any

	trace *deltaTrace
}

// deltaTrace is what a traced delta carries: its root span and when it was
// queued (the start of its DeltaFIFO.queued wait).
type deltaTrace struct {
	root     trace.SpanContext
	queuedAt time.Time
	// atomic is set on a RealFIFO's ReplacedAll and SyncAll entries only;
	// root is then the entry's own span (see real_fifo_tracing.go).
	atomic *atomicTrace
	// merged holds the traces of Deleted deltas that dedupDeltas collapsed
	// into this one (DeltaFIFO only). Their roots were already exported, so
	// they ride along to be popped with this delta: each still gets its
	// queue wait span and a HandleDeltas, as the span contract asks of every
	// root that was not dropped at stop.
	merged []*deltaTrace
}

// Deltas is the list of changes queued for one key, oldest first.
//
// Mirrors [k8s.io/client-go/tools/cache.Deltas] (delta_fifo.go).
type Deltas []Delta

// Oldest is the first delta, or nil.
func (d Deltas) Oldest() *Delta {
	if len(d) == 0 {
		return nil
	}
	return &d[0]
}

// Newest is the last delta, or nil.
func (d Deltas) Newest() *Delta {
	if len(d) == 0 {
		return nil
	}
	return &d[len(d)-1]
}

// DeletedFinalStateUnknown is a tombstone: the object was deleted, but the
// informer never saw the DELETED event (the watch broke, and the relist no
// longer contained it). Obj is the last state the informer knew, and may be
// stale or nil. Delete handlers must expect it in place of the object.
//
// Mirrors [k8s.io/client-go/tools/cache.DeletedFinalStateUnknown] (delta_fifo.go).
type DeletedFinalStateUnknown struct {
	Key string
	Obj any
}

// DeletionHandlingMetaNamespaceKeyFunc is [store.MetaNamespaceKeyFunc] that
// also keys tombstones (by their Key). Use it wherever a tombstone may turn
// up: a queue's or an informer's key function.
//
// Mirrors [k8s.io/client-go/tools/cache.DeletionHandlingMetaNamespaceKeyFunc] (controller.go).
func DeletionHandlingMetaNamespaceKeyFunc(obj any) (string, error) {
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	return store.MetaNamespaceKeyFunc(obj)
}

// KeyListerGetter is what a DeltaFIFO needs of the informer's cache (its
// "known objects"): the keys, and an object by key.
//
// Mirrors [k8s.io/client-go/tools/cache.KeyListerGetter] (delta_fifo.go).
type KeyListerGetter interface {
	ListKeys() []string
	GetByKey(key string) (value any, exists bool, err error)
}

// TransformFunc rewrites an object before it is queued; see
// [store.TransformFunc], which this names here so that code written against
// chapter 4's queues finds it where upstream keeps it.
//
// Mirrors [k8s.io/client-go/tools/cache.TransformFunc] (delta_fifo.go).
type TransformFunc = store.TransformFunc

// PopProcessFunc processes what Pop took off the queue: the key's Deltas,
// and whether they belong to the initial list.
//
// Mirrors [k8s.io/client-go/tools/cache.PopProcessFunc] (fifo.go).
type PopProcessFunc func(obj any, isInInitialList bool) error

// ErrFIFOClosed is returned by Pop once the queue is closed and empty.
//
// Mirrors [k8s.io/client-go/tools/cache.ErrFIFOClosed] (fifo.go), same message.
var ErrFIFOClosed = errors.New("DeltaFIFO: manipulating with closed queue")

// ErrZeroLengthDeltasObject is KeyOf's error for an empty Deltas.
//
// Mirrors [k8s.io/client-go/tools/cache.ErrZeroLengthDeltasObject] (delta_fifo.go).
var ErrZeroLengthDeltasObject = errors.New("0 length Deltas object; can't get key")

// Queue is a ReflectorStore (chapter 3) that can also be popped.
//
// Mirrors [k8s.io/client-go/tools/cache.Queue] (fifo.go).
type Queue interface {
	Add(obj any) error
	Update(obj any) error
	Delete(obj any) error
	Replace(list []any, resourceVersion string) error
	Resync() error
	// Pop blocks until there is something to pop, then hands it to process.
	Pop(process PopProcessFunc) (any, error)
	// HasSynced: the first Replace's items have all been popped.
	HasSynced() bool
	// HasSyncedChecker's Done is closed when HasSynced becomes true.
	HasSyncedChecker() DoneChecker
	// Close makes a blocked Pop return ErrFIFOClosed.
	Close()
}
