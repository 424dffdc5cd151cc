package processor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

const tracerName = "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"

// popBatchSize is how many queued keys the informer pops per lock hold.
const popBatchSize = 100

// minimumResyncPeriod: a handler asking to be resynced more often than once
// a second gets once a second; resyncing is a full pass over the cache.
const minimumResyncPeriod = time.Second

// SharedInformer is one informer shared by any number of handlers: one
// reflector, one queue, one cache, and a buffer per handler.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedInformer] (shared_informer.go),
// without GetController, HasSyncedChecker and the batch and typed variants.
type SharedInformer interface {
	// AddEventHandler adds a handler with the informer's default resync
	// period. Added after Run, it first gets an OnAdd for every cached object.
	AddEventHandler(handler ResourceEventHandler) (ResourceEventHandlerRegistration, error)
	// AddEventHandlerWithResyncPeriod adds a handler with its own resync period.
	AddEventHandlerWithResyncPeriod(handler ResourceEventHandler, resyncPeriod time.Duration) (ResourceEventHandlerRegistration, error)
	// RemoveEventHandler stops a handler; removing one twice is not an error.
	RemoveEventHandler(handle ResourceEventHandlerRegistration) error
	GetStore() store.Store
	Run(stopCh <-chan struct{})
	RunWithContext(ctx context.Context)
	// HasSynced: the initial list has been handed to every handler.
	HasSynced() bool
	LastSyncResourceVersion() string
	// SetWatchErrorHandler must be called before Run.
	SetWatchErrorHandler(handler reflector.WatchErrorHandler) error
	// SetTransform must be called before Run.
	SetTransform(handler deltafifo.TransformFunc) error
	IsStopped() bool
}

// SharedIndexInformer is a SharedInformer whose cache is an Indexer.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedIndexInformer] (shared_informer.go).
type SharedIndexInformer interface {
	SharedInformer
	// AddIndexers adds indexes to the cache, before or after Run.
	AddIndexers(indexers store.Indexers) error
	GetIndexer() store.Indexer
}

// ResourceEventHandlerRegistration is what AddEventHandler returns: the
// handle to remove the handler, and its own HasSynced.
//
// Mirrors [k8s.io/client-go/tools/cache.ResourceEventHandlerRegistration] (shared_informer.go).
type ResourceEventHandlerRegistration interface {
	// HasSynced: the informer has synced and every initial-list OnAdd to
	// this handler has returned.
	HasSynced() bool
}

// SharedIndexInformerOptions configures NewSharedIndexInformerWithOptions.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedIndexInformerOptions] (shared_informer.go),
// with Name and TracerProvider.
type SharedIndexInformerOptions struct {
	// ResyncPeriod is the default resync period of handlers (0: none).
	ResyncPeriod time.Duration
	// Indexers of the cache.
	Indexers store.Indexers
	// ObjectDescription names the type in messages.
	ObjectDescription string
	// Name is informer.name in spans; default ObjectDescription.
	Name string
	// TracerProvider for every span of the informer; default the global one.
	TracerProvider trace.TracerProvider
}

// NewSharedInformer returns a SharedInformer with no indexes.
//
// Mirrors [k8s.io/client-go/tools/cache.NewSharedInformer] (shared_informer.go).
func NewSharedInformer(lw reflector.ListerWatcher, exampleObject runtime.Object, defaultEventHandlerResyncPeriod time.Duration) SharedInformer {
	return NewSharedIndexInformer(lw, exampleObject, defaultEventHandlerResyncPeriod, store.Indexers{})
}

// NewSharedIndexInformer returns a SharedIndexInformer.
//
// Mirrors [k8s.io/client-go/tools/cache.NewSharedIndexInformer] (shared_informer.go).
func NewSharedIndexInformer(lw reflector.ListerWatcher, exampleObject runtime.Object, defaultEventHandlerResyncPeriod time.Duration, indexers store.Indexers) SharedIndexInformer {
	return NewSharedIndexInformerWithOptions(lw, exampleObject, SharedIndexInformerOptions{
		ResyncPeriod: defaultEventHandlerResyncPeriod, Indexers: indexers,
	})
}

// NewSharedIndexInformerWithOptions returns a SharedIndexInformer.
//
// Mirrors [k8s.io/client-go/tools/cache.NewSharedIndexInformerWithOptions] (shared_informer.go).
func NewSharedIndexInformerWithOptions(lw reflector.ListerWatcher, exampleObject runtime.Object, options SharedIndexInformerOptions) SharedIndexInformer {
	if options.ObjectDescription == "" {
		options.ObjectDescription = fmt.Sprintf("%T", exampleObject)
	}
	if options.Name == "" {
		options.Name = options.ObjectDescription
	}
	if options.Indexers == nil {
		options.Indexers = store.Indexers{}
	}
	return &sharedIndexInformer{
		processor:                       newSharedProcessor(),
		indexer:                         store.NewIndexer(deltafifo.DeletionHandlingMetaNamespaceKeyFunc, options.Indexers),
		listerWatcher:                   lw,
		objectType:                      exampleObject,
		objectDescription:               options.ObjectDescription,
		name:                            options.Name,
		nameAttr:                        tracing.KeyInformerName.String(options.Name),
		resyncCheckPeriod:               options.ResyncPeriod,
		defaultEventHandlerResyncPeriod: options.ResyncPeriod,
		tp:                              options.TracerProvider,
		tracer:                          tracing.Tracer(options.TracerProvider, tracerName),
	}
}

// sharedIndexInformer implements SharedIndexInformer.
//
// Mirrors the unexported sharedIndexInformer of upstream shared_informer.go.
type sharedIndexInformer struct {
	indexer       store.Indexer
	processor     *sharedProcessor
	listerWatcher reflector.ListerWatcher
	objectType    runtime.Object
	objectDescription,
	name string
	nameAttr attribute.KeyValue
	tp       trace.TracerProvider
	tracer   trace.Tracer

	// blockDeltas is held while HandleDeltas writes the cache and distributes,
	// and while a late handler is given the cache's contents: so that handler
	// sees each object exactly once, either in its synthetic adds or as a
	// notification, never both or neither.
	blockDeltas sync.Mutex

	startedLock sync.Mutex
	// Guarded by startedLock:
	started, stopped  bool
	controller        deltafifo.Controller
	queue             *deltafifo.DeltaFIFO
	transform         deltafifo.TransformFunc
	watchErrorHandler reflector.WatchErrorHandler
	// resyncCheckPeriod is how often the reflector asks whether any handler
	// is due for a resync: the smallest handler period known before Run.
	resyncCheckPeriod               time.Duration
	defaultEventHandlerResyncPeriod time.Duration
}

func (s *sharedIndexInformer) SetWatchErrorHandler(handler reflector.WatchErrorHandler) error {
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	if s.started {
		return fmt.Errorf("informer has already started")
	}
	s.watchErrorHandler = handler
	return nil
}

func (s *sharedIndexInformer) SetTransform(handler deltafifo.TransformFunc) error {
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	if s.started {
		return fmt.Errorf("informer has already started")
	}
	s.transform = handler
	return nil
}

func (s *sharedIndexInformer) Run(stopCh <-chan struct{}) {
	s.RunWithContext(wait.ContextForChannel(stopCh))
}

// RunWithContext runs the reflector, the queue and every handler until ctx
// is done. It may run only once.
func (s *sharedIndexInformer) RunWithContext(ctx context.Context) {
	s.startedLock.Lock()
	if s.started {
		s.startedLock.Unlock()
		return
	}
	s.queue = deltafifo.NewDeltaFIFOWithOptions(deltafifo.DeltaFIFOOptions{
		Name:                  s.name,
		KnownObjects:          s.indexer,
		EmitDeltaTypeReplaced: true,
		Transformer:           s.transform,
		TracerProvider:        s.tp,
	})
	s.controller = deltafifo.New(&deltafifo.Config{
		Queue:             s.queue,
		ListerWatcher:     s.listerWatcher,
		ObjectType:        s.objectType,
		ObjectDescription: s.objectDescription,
		Name:              s.name,
		FullResyncPeriod:  s.resyncCheckPeriod,
		ShouldResync:      s.processor.shouldResync,
		Process:           s.HandleDeltas,
		// Pop what is queued in batches, as client-go's default informer
		// does on its RealFIFO; see DeltaFIFO.PopBatch.
		PopBatchSize:      popBatchSize,
		WatchErrorHandler: s.watchErrorHandler,
		TracerProvider:    s.tp,
	})
	s.started = true
	s.startedLock.Unlock()

	// The processor outlives ctx by a moment: it is stopped after the
	// controller, so notifications already distributed are not cut off
	// mid-handoff.
	procCtx, stopProcessor := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { s.processor.run(procCtx) })
	defer func() {
		s.startedLock.Lock()
		s.stopped = true
		s.startedLock.Unlock()
		stopProcessor()
		wg.Wait()
	}()
	s.controller.RunWithContext(ctx)
}

func (s *sharedIndexInformer) HasSynced() bool {
	s.startedLock.Lock()
	c := s.controller
	s.startedLock.Unlock()
	return c != nil && c.HasSynced()
}

func (s *sharedIndexInformer) LastSyncResourceVersion() string {
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	if s.controller == nil {
		return ""
	}
	return s.controller.LastSyncResourceVersion()
}

func (s *sharedIndexInformer) GetStore() store.Store     { return s.indexer }
func (s *sharedIndexInformer) GetIndexer() store.Indexer { return s.indexer }

func (s *sharedIndexInformer) AddIndexers(indexers store.Indexers) error {
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	if s.stopped {
		return fmt.Errorf("indexer was not added because it has stopped already")
	}
	return s.indexer.AddIndexers(indexers)
}

func (s *sharedIndexInformer) IsStopped() bool {
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	return s.stopped
}

func (s *sharedIndexInformer) AddEventHandler(handler ResourceEventHandler) (ResourceEventHandlerRegistration, error) {
	return s.AddEventHandlerWithResyncPeriod(handler, s.defaultEventHandlerResyncPeriod)
}

// determineResyncPeriod fits a handler's wish to the informer's check period:
// 0 stays 0; an informer that does not resync cannot honour any period; a
// period shorter than the check period is raised to it.
func determineResyncPeriod(desired, check time.Duration) time.Duration {
	switch {
	case desired == 0:
		return 0
	case check == 0:
		return 0
	case desired < check:
		return check
	}
	return desired
}

func (s *sharedIndexInformer) AddEventHandlerWithResyncPeriod(handler ResourceEventHandler, resyncPeriod time.Duration) (ResourceEventHandlerRegistration, error) {
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	if s.stopped {
		return nil, fmt.Errorf("handler %v was not added to shared informer because it has stopped already", handler)
	}
	if resyncPeriod > 0 {
		resyncPeriod = max(resyncPeriod, minimumResyncPeriod)
		if resyncPeriod < s.resyncCheckPeriod {
			if s.started {
				// The reflector's timer is already running at the check
				// period; this handler cannot be resynced more often.
				resyncPeriod = s.resyncCheckPeriod
			} else {
				s.resyncCheckPeriod = resyncPeriod
				s.processor.resyncCheckPeriodChanged(resyncPeriod)
			}
		}
	}
	l := newProcessListener(handler, s.processor.listenerName(handler), resyncPeriod,
		determineResyncPeriod(resyncPeriod, s.resyncCheckPeriod), time.Now(), s.HasSynced, s.tracer, s.nameAttr)
	if !s.started {
		s.processor.addListener(l)
		return l, nil
	}

	// Started: the new handler first hears of every cached object, with
	// deltas held off so nothing slips between the snapshot and the stream.
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	s.processor.addListener(l)
	traced := tracing.Enabled(s.tp)
	for _, item := range s.indexer.List() {
		n := notification{kind: addKind, newObj: item, isInInitialList: true}
		var span trace.Span
		if traced {
			span = s.startSyntheticAdd(&n)
		}
		l.add(n)
		if span != nil {
			span.End()
		}
	}
	return l, nil
}

func (s *sharedIndexInformer) RemoveEventHandler(handle ResourceEventHandlerRegistration) error {
	l, ok := handle.(*processorListener)
	if !ok {
		return fmt.Errorf("invalid key type %T", handle)
	}
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	s.processor.removeListener(l)
	return nil
}

// HandleDeltas is the queue's Process function: for each delta of a popped
// key, oldest first, write the cache, then tell every handler. Writing first
// means a handler that reads the cache (a lister) always finds at least the
// state it is told about.
//
//   - Added, Updated, Replaced, Sync of a key the cache has: OnUpdate(old, new),
//     sent only to handlers due for a resync when old and new have the same
//     resourceVersion (nothing changed: a resync or a relist of the same state);
//   - the same for a key the cache lacks: OnAdd;
//   - Deleted: OnDelete with the object or its DeletedFinalStateUnknown.
//
// Mirrors sharedIndexInformer.HandleDeltas and processDeltas (shared_informer.go,
// controller.go).
func (s *sharedIndexInformer) HandleDeltas(obj any, isInInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	deltas, ok := obj.(deltafifo.Deltas)
	if !ok {
		return errors.New("object given as Process argument is not Deltas")
	}
	if len(deltas) == 0 {
		return nil
	}
	// Every delta of one pop has the same key: compute it once.
	key, err := deltafifo.DeletionHandlingMetaNamespaceKeyFunc(deltas[0].Object)
	if err != nil {
		return err
	}
	var ctxs []context.Context
	var spans []trace.Span
	if tracing.Enabled(s.tp) {
		ctxs, spans = deltafifo.StartHandleDeltas(s.tracer, s.name, key, deltas, isInInitialList)
		defer func() {
			for _, sp := range spans {
				sp.End()
			}
		}()
	}
	for i, d := range deltas {
		var ctx context.Context
		if ctxs != nil {
			ctx = ctxs[i]
		}
		if err := s.handleDelta(ctx, key, d, isInInitialList); err != nil {
			return err
		}
	}
	return nil
}

func (s *sharedIndexInformer) handleDelta(ctx context.Context, key string, d deltafifo.Delta, isInInitialList bool) error {
	var n notification
	isSync := false
	op := "Indexer.Delete"
	if d.Type == deltafifo.Deleted {
		n = notification{kind: deleteKind, oldObj: d.Object}
	} else if old, exists, err := s.indexer.GetByKey(key); err == nil && exists {
		op = "Indexer.Update"
		n = notification{kind: updateKind, oldObj: old, newObj: d.Object}
		isSync = sameResourceVersion(old, d.Object)
	} else {
		op = "Indexer.Add"
		n = notification{kind: addKind, newObj: d.Object, isInInitialList: isInInitialList}
	}

	// The Indexer span covers the cache write only; ending it before
	// distribute keeps the fan-out's time out of the write's.
	var span trace.Span
	if ctx != nil {
		_, span = s.tracer.Start(ctx, op, internal, trace.WithAttributes(s.nameAttr, tracing.KeyObjectKey.String(key)))
	}
	var err error
	switch n.kind {
	case deleteKind:
		err = s.indexer.Delete(d.Object)
	case updateKind:
		err = s.indexer.Update(d.Object)
	default:
		err = s.indexer.Add(d.Object)
	}
	if span != nil {
		if err != nil {
			span.RecordError(err)
		}
		span.End()
	}
	if err != nil {
		return err
	}
	if ctx == nil {
		s.processor.distribute(n, isSync)
		return nil
	}
	dctx, span := s.tracer.Start(ctx, tracing.SpanDistribute, internal, trace.WithAttributes(s.nameAttr, tracing.KeyObjectKey.String(key)))
	n.tr = &notificationTrace{parent: trace.SpanContextFromContext(dctx), key: key}
	s.processor.distribute(n, isSync)
	span.End()
	return nil
}

// startSyntheticAdd starts the root of a late handler's synthetic add:
// "AddEventHandler" (INTERNAL), under which its addCh chain hangs.
func (s *sharedIndexInformer) startSyntheticAdd(n *notification) trace.Span {
	key, _ := deltafifo.DeletionHandlingMetaNamespaceKeyFunc(n.newObj)
	_, span := s.tracer.Start(context.Background(), tracing.SpanAddEventHandle, internal, trace.WithNewRoot(),
		trace.WithAttributes(s.nameAttr, tracing.KeyObjectKey.String(key)))
	if !span.IsRecording() {
		return span
	}
	n.tr = &notificationTrace{parent: span.SpanContext(), key: key}
	return span
}

func sameResourceVersion(a, b any) bool {
	ma, errA := meta.Accessor(a)
	mb, errB := meta.Accessor(b)
	return errA == nil && errB == nil && ma.GetResourceVersion() == mb.GetResourceVersion()
}

// InformerSynced reports whether an informer (or a handler registration) has
// synced.
//
// Mirrors [k8s.io/client-go/tools/cache.InformerSynced] (shared_informer.go).
type InformerSynced func() bool

// WaitForCacheSync waits until every cacheSync is true (checking every
// 100ms, as upstream) or stopCh closes; it reports whether they synced.
//
// Mirrors [k8s.io/client-go/tools/cache.WaitForCacheSync] (shared_informer.go).
func WaitForCacheSync(stopCh <-chan struct{}, cacheSyncs ...InformerSynced) bool {
	err := wait.PollUntilContextCancel(wait.ContextForChannel(stopCh), 100*time.Millisecond, true,
		func(context.Context) (bool, error) {
			for _, synced := range cacheSyncs {
				if !synced() {
					return false, nil
				}
			}
			return true, nil
		})
	return err == nil
}
