package deltafifo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/util/sets"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// The consumer side of the queue: what an informer does with what it pops.
// Upstream keeps it in controller.go (processDeltas, processDeltasInBatch,
// processReplacedAllInfo) and calls it both from NewInformer's Process and
// from the shared informer's HandleDeltas; here it is [Consumer], used by
// this chapter's NewInformer and meant for chapter 5's HandleDeltas.

// QueueWithBatch is a [Queue] that can hand several entries to one process
// call. [RealFIFO] is one; the controller's processLoop uses PopBatch when
// the queue is one and [Config].ProcessBatch is set.
//
// Mirrors [k8s.io/client-go/tools/cache.QueueWithBatch] (fifo.go).
type QueueWithBatch interface {
	Queue
	// PopBatch waits for an entry and hands a run of entries to
	// processBatch, or a single one (as a one-element Deltas) to
	// processSingle.
	PopBatch(processBatch ProcessBatchFunc, processSingle PopProcessFunc) error
}

var _ QueueWithBatch = &RealFIFO{}

// Consumer applies popped deltas to an informer's cache and then tells
// Handler about each change, in the order client-go's informer does. Its
// ProcessDeltas fits [Config].Process (through a [PopProcessFunc] that
// asserts [Deltas]) and its ProcessDeltasInBatch fits [Config].ProcessBatch.
//
// The cache is written before Handler hears of a change, so a handler that
// reads the cache (a lister) finds at least the state it is told about.
//
// Not a type upstream: client-go passes the same values (the handler, the
// store, the key function) as arguments to processDeltas and
// processDeltasInBatch (controller.go). Tracer and Name are ours.
type Consumer struct {
	// Store is the informer's cache (clientState upstream). If it is a
	// [store.TransactionStore], a batch is written with one Transaction.
	Store store.Store
	// KeyFunc keys the objects of an atomic relist to find the cached
	// objects it no longer lists (keyFunc upstream); use
	// DeletionHandlingMetaNamespaceKeyFunc, as the informers do. Default
	// DeletionHandlingMetaNamespaceKeyFunc.
	KeyFunc store.KeyFunc
	// Handler is told of every change after the cache has it; see
	// [InformerProcessFunc] for what it is given.
	Handler InformerProcessFunc
	// Tracer starts the consumer's spans (HandleDeltas, Indexer.*); nil
	// means none. Deltas queued untraced get no spans either way.
	Tracer trace.Tracer
	// Name is the informer's name, informer.name on those spans.
	Name string
}

func (c *Consumer) keyOf(obj any) (string, error) {
	if c.KeyFunc != nil {
		return c.KeyFunc(obj)
	}
	return DeletionHandlingMetaNamespaceKeyFunc(obj)
}

// ProcessDeltas handles the deltas of one pop, oldest first: from a
// DeltaFIFO all of one key's, from a [RealFIFO] exactly one. Per type:
//
//   - Added, Updated, Replaced, Sync: Store.Update if the cache has the key
//     (Handler gets old = the cached object), else Store.Add (old = nil);
//   - Deleted: Store.Delete; old is what the cache held, or nil;
//   - ReplacedAll: the whole relist, reconciled against the cache: see
//     processReplacedAll;
//   - SyncAll: Handler gets an update with old = new for every cached object;
//     the cache is not written;
//   - Bookmark: Store.Bookmark with its resourceVersion; Handler hears
//     nothing.
//
// A store error stops it and is returned; the remaining deltas of the pop
// are not applied, as upstream (the queue does not requeue them either).
//
// Mirrors processDeltas (client-go controller.go), with two differences: an
// unknown delta type is an error instead of being skipped silently, and a
// SyncAll replays the cache in key order instead of map order.
func (c *Consumer) ProcessDeltas(deltas Deltas, isInInitialList bool) error {
	if len(deltas) == 0 {
		return nil
	}
	// Per-object deltas popped together share the HandleDeltas rule of the
	// span contract (own root, links to the others); atomic entries make
	// their per-object traces themselves, and a Bookmark has no trace.
	var ctxs []context.Context
	var spans []trace.Span
	if c.Tracer != nil && batchable(deltas[0].Type) && slices.ContainsFunc(deltas, func(d Delta) bool { return d.trace != nil }) {
		if key, err := c.keyOf(deltas[0].Object); err == nil {
			ctxs, spans = StartHandleDeltas(c.Tracer, c.Name, key, deltas, isInInitialList)
		}
	}
	var err error
	for i, d := range deltas {
		ctx := background
		if ctxs != nil {
			ctx = ctxs[i]
		}
		if err = c.processOne(ctx, d, isInInitialList); err != nil {
			break
		}
	}
	for _, s := range spans {
		tracing.SetError(s, err, false)
		s.End()
	}
	return err
}

func (c *Consumer) processOne(ctx context.Context, d Delta, isInInitialList bool) error {
	switch d.Type {
	case Added, Updated, Replaced, Sync:
		old, exists, err := c.Store.Get(d.Object)
		op := "Add"
		if err == nil && exists {
			op = "Update"
		} else {
			old = nil
		}
		span := c.startIndexer(ctx, op, d.Object)
		if op == "Update" {
			err = c.Store.Update(d.Object)
		} else {
			err = c.Store.Add(d.Object)
		}
		endIndexer(span, err)
		if err != nil {
			return err
		}
		c.Handler(ctx, d, old, isInInitialList)
	case Deleted:
		old, exists, _ := c.Store.Get(d.Object)
		if !exists {
			old = nil
		}
		span := c.startIndexer(ctx, "Delete", d.Object)
		err := c.Store.Delete(d.Object)
		endIndexer(span, err)
		if err != nil {
			return err
		}
		c.Handler(ctx, d, old, isInInitialList)
	case ReplacedAll:
		info, ok := d.Object.(ReplacedAllInfo)
		if !ok {
			return fmt.Errorf("ReplacedAll delta does not hold a ReplacedAllInfo but a %T", d.Object)
		}
		return c.processReplacedAll(d, info, isInInitialList)
	case SyncAll:
		if _, ok := d.Object.(SyncAllInfo); !ok {
			return fmt.Errorf("SyncAll delta does not hold a SyncAllInfo but a %T", d.Object)
		}
		c.processSyncAll(d, isInInitialList)
	case Bookmark:
		info, ok := d.Object.(BookmarkInfo)
		if !ok {
			return fmt.Errorf("Bookmark delta does not hold a BookmarkInfo but a %T", d.Object)
		}
		c.Store.Bookmark(info.ResourceVersion)
	default:
		// Upstream skips it without a word; the object would then be
		// neither cached nor handled, and nobody would know why.
		return fmt.Errorf("delta type %q is not one the informer knows (Added, Updated, Deleted, Replaced, Sync, ReplacedAll, SyncAll, Bookmark)", d.Type)
	}
	return nil
}

// atomicEvent is one change found while processing a ReplacedAll entry.
type atomicEvent struct {
	key  string
	d    Delta // Deleted with a tombstone, or Replaced with a listed object
	old  any
	ctx  context.Context
	span trace.Span
}

// processReplacedAll applies an atomic relist. The cached keys the list no
// longer has become tombstones ([DeletedFinalStateUnknown] holding the
// cached object); every listed object becomes a Replaced change, with old =
// the cached object if there was one. Then, in this order:
//
//  1. Store.Replace with the whole list, so that by the time any handler
//     runs the cache already is the new list;
//  2. Handler for every tombstone, in key order;
//  3. Handler for every listed object, in list order.
//
// This is the order a per-event RealFIFO would have queued them in (its
// Replace queues the tombstones first), so a consumer cannot tell the two
// modes apart. A listed object that cannot be keyed fails the whole entry
// before anything is written.
//
// Mirrors processReplacedAllInfo and reconcileReplacement (client-go
// controller.go, the_real_fifo.go), except that upstream emits the
// tombstones in the cache's map order: we sort them by key so the order is
// the same on every run.
func (c *Consumer) processReplacedAll(entry Delta, info ReplacedAllInfo, isInInitialList bool) error {
	listed := make(sets.Set[string], len(info.Objects))
	keys := make([]string, len(info.Objects))
	for i, obj := range info.Objects {
		key, err := c.keyOf(obj)
		if err != nil {
			return store.KeyError{Obj: obj, Err: err}
		}
		keys[i] = key
		listed.Insert(key)
	}
	var gone []string
	for _, key := range c.Store.ListKeys() {
		if !listed.Has(key) {
			gone = append(gone, key)
		}
	}
	slices.Sort(gone)
	events := make([]atomicEvent, 0, len(gone)+len(info.Objects))
	for _, key := range gone {
		// A lookup error or a vanished key still makes a tombstone, with no
		// object: the handler must hear of the deletion either way.
		obj, exists, err := c.Store.GetByKey(key)
		if err != nil || !exists {
			obj = nil
		}
		events = append(events, atomicEvent{key: key, old: obj,
			d: Delta{Type: Deleted, Object: DeletedFinalStateUnknown{Key: key, Obj: obj}}})
	}
	for i, obj := range info.Objects {
		old, exists, err := c.Store.Get(obj)
		if err != nil || !exists {
			old = nil
		}
		events = append(events, atomicEvent{key: keys[i], old: old, d: Delta{Type: Replaced, Object: obj}})
	}

	traced := c.Tracer != nil && entry.trace != nil
	if traced {
		for i := range events {
			e := &events[i]
			event := "LISTED"
			if e.d.Type == Deleted {
				event = "TOMBSTONE"
			}
			e.ctx, e.span = StartAtomicObject(c.Tracer, c.Name, entry, e.key, e.d.Object, event, isInInitialList)
		}
	}
	start := time.Now()
	err := c.Store.Replace(info.Objects, info.ResourceVersion)
	if traced {
		c.indexerSpansForReplace(events, start, time.Now(), err)
	}
	if err != nil {
		for _, e := range events {
			if e.span != nil {
				tracing.SetError(e.span, err, false)
				e.span.End()
			}
		}
		return err
	}
	for _, e := range events {
		ctx := e.ctx
		if ctx == nil {
			ctx = background
		}
		c.Handler(ctx, e.d, e.old, isInInitialList)
		if e.span != nil {
			e.span.End()
		}
	}
	return nil
}

// indexerSpansForReplace gives every traced object of a relist its cache
// write span, covering the one Store.Replace that wrote them all: what that
// object's handlers waited for.
func (c *Consumer) indexerSpansForReplace(events []atomicEvent, start, end time.Time, err error) {
	for _, e := range events {
		if e.span == nil || !e.span.IsRecording() {
			continue
		}
		op := "Update"
		switch {
		case e.d.Type == Deleted:
			op = "Delete"
		case e.old == nil:
			op = "Add"
		}
		_, s := c.Tracer.Start(e.ctx, tracing.SpanIndexerPrefix+op, internal, trace.WithTimestamp(start),
			trace.WithAttributes(tracing.KeyInformerName.String(c.Name), tracing.KeyObjectKey.String(tracing.Value(e.key))))
		endIndexer(s, err, trace.WithTimestamp(end))
	}
}

// processSyncAll replays the cache: for every cached object, in key order,
// Handler gets an update with old and new both the cached object. It writes
// nothing: the cache already holds these objects.
//
// Mirrors the SyncAll case of processDeltas (client-go controller.go), which
// goes by Store.List's map order.
func (c *Consumer) processSyncAll(entry Delta, isInInitialList bool) {
	keys := c.Store.ListKeys()
	slices.Sort(keys)
	traced := c.Tracer != nil && entry.trace != nil
	synced := Delta{Type: Sync}
	for _, key := range keys {
		obj, exists, err := c.Store.GetByKey(key)
		if err != nil || !exists {
			// Only a concurrent writer could remove it, and the consumer is
			// the cache's one writer.
			continue
		}
		synced.Object = obj
		if !traced {
			c.Handler(background, synced, obj, isInInitialList)
			continue
		}
		ctx, span := StartAtomicObject(c.Tracer, c.Name, entry, key, obj, "RESYNC", isInInitialList)
		c.Handler(ctx, synced, obj, isInInitialList)
		if span != nil {
			span.End()
		}
	}
}

// batchChange is one delta of a batch, prepared before the transaction.
type batchChange struct {
	d    Delta
	old  any
	ctx  context.Context
	span trace.Span
	key  string
}

// ProcessDeltasInBatch handles a run of deltas popped together by
// [RealFIFO.PopBatch], one per key, all per-object types. If Store is a
// [store.TransactionStore], every cache write of the batch is one
// Transaction (one lock hold), and the handler calls follow it, in batch
// order; if the transaction reports some writes as failed (an object
// that cannot be keyed), only the successful ones reach Handler, and the
// error says how many failed. Without transactions each delta goes through
// ProcessDeltas on its own and the errors are collected.
//
// A ReplacedAll, SyncAll or Bookmark in a batch is an error and nothing of
// the batch is applied: the RealFIFO never batches them.
//
// Mirrors processDeltasInBatch (client-go controller.go).
func (c *Consumer) ProcessDeltasInBatch(deltas []Delta, isInInitialList bool) error {
	buf := batchBufferPool.Get().(*batchBuffers)
	defer buf.release()
	buf.changes = slices.Grow(buf.changes[:0], len(deltas))[:len(deltas)]
	changes := buf.changes
	for i, d := range deltas {
		changes[i].d = d
		if c.Tracer != nil && d.trace != nil {
			key, _ := c.keyOf(d.Object)
			changes[i].key = key
			changes[i].ctx, changes[i].span = StartHandleDeltasInBatch(c.Tracer, c.Name, key, d, len(deltas), isInInitialList)
		}
	}
	err := c.processBatch(changes, buf, isInInitialList)
	for _, ch := range changes {
		if ch.span == nil {
			continue
		}
		if err != nil {
			// The batch error names no delta; mark every span of the
			// batch so a reader sees which pop it was.
			tracing.SetError(ch.span, err, false)
		}
		ch.span.End()
	}
	return err
}

// batchBuffers are the scratch slices of one ProcessDeltasInBatch call,
// pooled: allocated per batch they were the consumer's largest garbage (two
// slices as long as the batch, per batch; chapter 5's
// BenchmarkSharedInformer). A pool rather than fields of Consumer keeps a
// Consumer safe to share. Not in client-go, which allocates per batch.
type batchBuffers struct {
	changes []batchChange
	txns    []store.Transaction
}

var batchBufferPool = sync.Pool{New: func() any { return new(batchBuffers) }}

// release drops what the buffers reference (objects, spans), so a pooled
// buffer keeps no object alive, and returns them to the pool.
func (b *batchBuffers) release() {
	clear(b.changes)
	clear(b.txns)
	batchBufferPool.Put(b)
}

func (c *Consumer) processBatch(changes []batchChange, buf *batchBuffers, isInInitialList bool) error {
	txnStore, ok := c.Store.(store.TransactionStore)
	if !ok {
		var errs []error
		for _, ch := range changes {
			ctx := ch.ctx
			if ctx == nil {
				ctx = background
			}
			if err := c.processOne(ctx, ch.d, isInInitialList); err != nil {
				errs = append(errs, err)
			}
		}
		if errs != nil {
			return fmt.Errorf("%d of %d deltas of the batch not processed: %w", len(errs), len(changes), errors.Join(errs...))
		}
		return nil
	}

	buf.txns = slices.Grow(buf.txns[:0], len(changes))[:len(changes)]
	txns := buf.txns
	for i := range changes {
		ch := &changes[i]
		// Keys are unique in a batch, so what the cache holds now is what
		// each write replaces, whatever the order of the writes.
		old, exists, err := c.Store.Get(ch.d.Object)
		if err != nil || !exists {
			old = nil
		}
		ch.old = old
		switch ch.d.Type {
		case Added, Updated, Replaced, Sync:
			txns[i] = store.Transaction{Object: ch.d.Object, Type: store.TransactionTypeAdd}
			if old != nil {
				txns[i].Type = store.TransactionTypeUpdate
			}
		case Deleted:
			txns[i] = store.Transaction{Object: ch.d.Object, Type: store.TransactionTypeDelete}
		default:
			return fmt.Errorf("delta type %q cannot be processed in a batch (only Added, Updated, Deleted, Replaced, Sync)", ch.d.Type)
		}
	}

	start := time.Now()
	txnErr := txnStore.Transaction(txns...)
	end := time.Now()
	applied := func(yield func(int) bool) {
		if txnErr == nil {
			for i := range changes {
				if !yield(i) {
					return
				}
			}
			return
		}
		for _, i := range txnErr.SuccessfulIndices {
			if i < len(changes) && !yield(i) {
				return
			}
		}
	}
	if c.Tracer != nil {
		c.indexerSpansForBatch(changes, txns, txnErr, start, end)
	}
	for i := range applied {
		ch := changes[i]
		ctx := ch.ctx
		if ctx == nil {
			ctx = background
		}
		c.Handler(ctx, ch.d, ch.old, isInInitialList)
	}
	if txnErr != nil {
		return fmt.Errorf("batch only partly applied to the cache: %w", txnErr)
	}
	return nil
}

// indexerSpansForBatch gives every traced delta of a batch its cache write
// span, covering the one Transaction that wrote them all; a write the
// transaction refused records that.
func (c *Consumer) indexerSpansForBatch(changes []batchChange, txns []store.Transaction, txnErr *store.TransactionError, start, end time.Time) {
	var failed sets.Set[int]
	if txnErr != nil {
		failed = sets.New[int]()
		for i := range changes {
			failed.Insert(i)
		}
		failed.Delete(txnErr.SuccessfulIndices...)
	}
	for i, ch := range changes {
		if ch.span == nil || !ch.span.IsRecording() {
			continue
		}
		_, s := c.Tracer.Start(ch.ctx, tracing.SpanIndexerPrefix+string(txns[i].Type), internal, trace.WithTimestamp(start),
			trace.WithAttributes(tracing.KeyInformerName.String(c.Name), tracing.KeyObjectKey.String(tracing.Value(ch.key)),
				tracing.KeyBatchSize.Int(len(changes))))
		var err error
		if failed.Has(i) {
			err = errors.New("not applied: see the batch's transaction error")
		}
		endIndexer(s, err, trace.WithTimestamp(end))
	}
}

// startIndexer starts the cache write span "Indexer.<op>" under ctx's
// HandleDeltas span; nil when that span is not recording.
func (c *Consumer) startIndexer(ctx context.Context, op string, obj any) trace.Span {
	if c.Tracer == nil || !trace.SpanFromContext(ctx).IsRecording() {
		return nil
	}
	key, _ := c.keyOf(obj)
	_, s := c.Tracer.Start(ctx, tracing.SpanIndexerPrefix+op, internal,
		trace.WithAttributes(tracing.KeyInformerName.String(c.Name), tracing.KeyObjectKey.String(tracing.Value(key))))
	return s
}

func endIndexer(s trace.Span, err error, opts ...trace.SpanEndOption) {
	if s == nil {
		return
	}
	tracing.SetError(s, err, true)
	s.End(opts...)
}
