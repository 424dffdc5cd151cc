package processor

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

const tracerName = "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"

// keysPerPop is how many queued keys the informer pops per lock hold on
// the DeltaFIFO path (DeltaFIFO.PopKeys, ours). The RealFIFO path pops with
// the RealFIFO's own batching (up to 1,000 entries, upstream's rules).
const keysPerPop = 100

// minimumResyncPeriod: a handler asking to be resynced more often than once
// a second gets once a second; resyncing is a full pass over the cache.
const minimumResyncPeriod = time.Second

// SharedInformer is one informer shared by any number of handlers: one
// reflector, one queue, one cache, and a buffer per handler.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedInformer] (shared_informer.go),
// without GetController (package dropin has it) and the batch variants.
type SharedInformer interface {
	// AddEventHandler adds a handler with the informer's default resync
	// period. Added after Run, it first gets an OnAdd for every cached object.
	AddEventHandler(handler ResourceEventHandler) (ResourceEventHandlerRegistration, error)
	// AddEventHandlerWithResyncPeriod adds a handler with its own resync period.
	AddEventHandlerWithResyncPeriod(handler ResourceEventHandler, resyncPeriod time.Duration) (ResourceEventHandlerRegistration, error)
	// AddEventHandlerWithOptions adds a handler with the given options.
	AddEventHandlerWithOptions(handler ResourceEventHandler, options HandlerOptions) (ResourceEventHandlerRegistration, error)
	// RemoveEventHandler stops a handler; removing one twice is not an error.
	RemoveEventHandler(handle ResourceEventHandlerRegistration) error
	GetStore() store.Store
	Run(stopCh <-chan struct{})
	RunWithContext(ctx context.Context)
	// HasSynced: the queue has handed out the whole initial list (the
	// cache holds it); whether a handler has seen it is its registration's
	// HasSynced.
	HasSynced() bool
	// HasSyncedChecker's Done is closed when HasSynced becomes true.
	HasSyncedChecker() DoneChecker
	LastSyncResourceVersion() string
	// SetWatchErrorHandler must be called before Run.
	SetWatchErrorHandler(handler reflector.WatchErrorHandler) error
	// SetWatchErrorHandlerWithContext must be called before Run.
	SetWatchErrorHandlerWithContext(handler reflector.WatchErrorHandlerWithContext) error
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
	// HasSyncedChecker's Done is closed when HasSynced becomes true.
	HasSyncedChecker() DoneChecker
}

// HandlerOptions are the options of AddEventHandlerWithOptions.
//
// Mirrors [k8s.io/client-go/tools/cache.HandlerOptions] (shared_informer.go).
type HandlerOptions struct {
	// Logger, if set, is the logger a panic in the handler and a change
	// of its resync period are reported to; by default the global one.
	// Upstream's slow-handler log (a handler call over 100ms while more
	// than 1,024 notifications wait, through k8s.io/utils/trace) goes to
	// the global klog, not to this logger; ours has no such log (the
	// handler's span shows the time).
	Logger *klog.Logger
	// ResyncPeriod, if set, is the handler's resync period; nil means the
	// informer's default.
	ResyncPeriod *time.Duration
}

// DoneChecker is chapter 4's, so a registration's and a queue's checkers
// can be waited for together.
//
// Mirrors [k8s.io/client-go/tools/cache.DoneChecker] (shared_informer.go).
type DoneChecker = deltafifo.DoneChecker

// WaitFor waits until every checker is done or ctx is; see [deltafifo.WaitFor].
// Its log lines name the caller of this function: the logger handed on
// skips this frame too, or every line would point here.
//
// Mirrors [k8s.io/client-go/tools/cache.WaitFor] (shared_informer.go).
func WaitFor(ctx context.Context, what string, checkers ...DoneChecker) bool {
	if what != "" {
		helper, logger := klog.FromContext(ctx).WithCallStackHelper()
		helper()
		ctx = klog.NewContext(ctx, logger)
	}
	return deltafifo.WaitFor(ctx, what, checkers...)
}

// IsDone reports, without blocking, whether checker is done.
//
// Mirrors [k8s.io/client-go/tools/cache.IsDone] (shared_informer.go).
func IsDone(checker DoneChecker) bool { return deltafifo.IsDone(checker) }

// ShutDownEventHandler removes the handler handle was returned for and
// waits until its last call has returned, so the caller can release what
// the handler uses.
//
// Mirrors [k8s.io/client-go/tools/cache.ShutDownEventHandler] (shared_informer.go).
func ShutDownEventHandler(informer SharedInformer, handle ResourceEventHandlerRegistration) error {
	if err := informer.RemoveEventHandler(handle); err != nil {
		return err
	}
	s, ok := handle.(interface{ ShutdownChan() <-chan struct{} })
	if !ok {
		return fmt.Errorf("handle %T has no ShutdownChan(): cannot wait for its handler", handle)
	}
	<-s.ShutdownChan()
	return nil
}

// SharedIndexInformerOptions configures NewSharedIndexInformerWithOptions.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedIndexInformerOptions] (shared_informer.go),
// with Name, TracerProvider, Queue, TraceFilter, Observer, ReflectorBackoff and
// BeforePop, which are ours.
type SharedIndexInformerOptions struct {
	// ResyncPeriod is the default resync period of handlers (0: none).
	ResyncPeriod time.Duration
	// Indexers of the cache.
	Indexers store.Indexers
	// ObjectDescription names the type in messages; default
	// reflector.TypeDescription of the example object (the GVK of an
	// Unstructured one).
	ObjectDescription string
	// Name is informer.name in spans; default ObjectDescription.
	Name string
	// TracerProvider for every span of the informer; default the global one.
	TracerProvider trace.TracerProvider
	// Queue selects the queue between the reflector and HandleDeltas; the
	// zero value is [RealFIFOQueue], what client-go v0.37.2 runs. Ours: see
	// [QueueKind].
	Queue QueueKind
	// Identifier names the informer and its resource (see
	// [InformerName]); a factory with an informer name sets it. Ours uses
	// its resource as the default Name.
	Identifier InformerNameAndResource
	// TraceFilter, if set, traces only the objects it selects (build one
	// with [deltafifo.TraceKeys] or [deltafifo.TraceSelector]); nil traces
	// every object. It is asked once per delta, where its root would
	// start: by the queue at enqueue, by the consumer for each object of an
	// atomic relist or resync (tombstones included), and by
	// AddEventHandler for each synthetic add of a late handler. An object
	// left out runs untraced all the way to the handlers (no HandleDeltas,
	// distribute or listener spans), at the cost of that one call; the
	// reflector's cycle spans and the RealFIFO's ReplacedAll/SyncAll entry
	// spans are not per object and are made anyway. Ours: client-go does
	// not trace.
	TraceFilter deltafifo.TraceFilter
	// Observer is told how long process and handler calls take (ours;
	// see [Observer]).
	Observer Observer
	// ReflectorBackoff, if set, replaces the reflector's default retry
	// pacing (chapter 4's Config.ReflectorBackoff). Ours: client-go's
	// ReflectorOptions.Backoff is not reachable from a shared informer
	// (reflector.go leaves that open, citing kubernetes#136943); tests of a whole
	// informer set it so as not to wait out the 800ms-doubling default.
	ReflectorBackoff *reflector.Backoff
	// BeforePop, if set, is called before each pop of the informer's queue
	// and holds the pop loop while it runs (chapter 4's Config.BeforePop:
	// the reflector keeps queueing meanwhile). It must return soon after
	// its ctx is done, or the informer cannot stop. Ours: client-go's
	// informer has no such hook. The demo's queue lessons hold their
	// informers' loops until the lesson's writes are queued, so that a
	// DeltaFIFO coalesces them on every run.
	BeforePop func(ctx context.Context)
}

// QueueKind selects the queue a shared informer runs on. Not in client-go:
// v0.37.2's newQueueFIFO (controller.go) picks the queue from feature gates,
// and with InOrderInformers GA and locked on since 1.36 it always builds the
// RealFIFO. We keep the DeltaFIFO selectable so that the design most
// diagrams show, which client-go's informers ran up to 1.32, can still be
// run, traced and compared with today's.
type QueueKind int

const (
	// RealFIFOQueue (the default) is client-go v0.37.2's queue as its
	// informers configure it (newQueueFIFO with the gates at their
	// defaults): a [deltafifo.RealFIFO] with AtomicEvents (a relist is one
	// ReplacedAll entry, a resync one SyncAll entry), UnlockWhileProcessing
	// (the watch keeps queueing while HandleDeltas runs, kubernetes#103789),
	// EmitDeltaTypeBookmark, and batch pops (InOrderInformersBatchProcess).
	// Every event reaches the handlers in the API server's order; nothing
	// is coalesced.
	RealFIFOQueue QueueKind = iota
	// DeltaFIFOQueue is the design client-go's informers ran up to 1.32: a
	// [deltafifo.DeltaFIFO] with KnownObjects = the cache and
	// EmitDeltaTypeReplaced, popped up to 100 keys per lock hold. A key's
	// queued changes are popped together (coalesced), and keys come out in
	// the order they first arrived.
	DeltaFIFOQueue
)

// String is the kind's name, as the demo's --queue flag spells it.
func (k QueueKind) String() string {
	switch k {
	case RealFIFOQueue:
		return "realfifo"
	case DeltaFIFOQueue:
		return "deltafifo"
	}
	return fmt.Sprintf("QueueKind(%d)", int(k))
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
		// What client-go's reflector describes the type as when the
		// informer gives it no description: the GVK of an Unstructured.
		options.ObjectDescription = reflector.TypeDescription(exampleObject)
	}
	if options.Name == "" {
		options.Name = options.ObjectDescription
		if r := options.Identifier.GroupVersionResource().Resource; r != "" {
			options.Name = r
		}
	}
	if options.Indexers == nil {
		options.Indexers = store.Indexers{}
	}
	if options.Queue != RealFIFOQueue && options.Queue != DeltaFIFOQueue {
		// A caller's bug, like upstream's option panics: running on some
		// other queue than asked would be a silent surprise.
		panic(fmt.Sprintf("coding error: SharedIndexInformerOptions.Queue is %v, neither RealFIFOQueue nor DeltaFIFOQueue", options.Queue))
	}
	s := &sharedIndexInformer{
		processor:                       newSharedProcessor(),
		synced:                          make(chan struct{}),
		indexer:                         store.NewIndexer(deltafifo.DeletionHandlingMetaNamespaceKeyFunc, options.Indexers),
		queueKind:                       options.Queue,
		listerWatcher:                   lw,
		objectType:                      exampleObject,
		objectDescription:               options.ObjectDescription,
		name:                            options.Name,
		nameAttr:                        tracing.KeyInformerName.String(options.Name),
		resyncCheckPeriod:               options.ResyncPeriod,
		defaultEventHandlerResyncPeriod: options.ResyncPeriod,
		tp:                              options.TracerProvider,
		tracer:                          tracing.Tracer(options.TracerProvider, tracerName),
		traceFilter:                     options.TraceFilter,
		observer:                        options.Observer,
		reflectorBackoff:                options.ReflectorBackoff,
		beforePop:                       options.BeforePop,
	}
	s.consumer = deltafifo.Consumer{
		Store:   s.indexer,
		KeyFunc: deltafifo.DeletionHandlingMetaNamespaceKeyFunc,
		Handler: s.notify,
		Tracer:  s.tracer,
		Name:    s.name,
	}
	return s
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
	// traceFilter is given to the queue, and asked by AddEventHandler
	// for synthetic adds; nil: trace all.
	traceFilter deltafifo.TraceFilter
	observer    Observer
	// reflectorBackoff is the reflector's pacing; nil: its default.
	reflectorBackoff *reflector.Backoff
	// beforePop holds the pop loop (SharedIndexInformerOptions.BeforePop).
	beforePop func(ctx context.Context)
	// queueKind is the queue RunWithContext builds.
	queueKind QueueKind
	// consumer writes popped deltas to the indexer and calls notify for
	// each change (chapter 4's processDeltas and processDeltasInBatch).
	consumer deltafifo.Consumer

	// blockDeltas is held for the whole of every process call (HandleDeltas,
	// handleBatchDeltas: a key's deltas, a batch, or a whole atomic relist)
	// and while a late handler is given the cache's contents: so that
	// handler sees each object exactly once, either in its synthetic adds or
	// as a notification, never both or neither.
	blockDeltas sync.Mutex

	startedLock sync.Mutex
	// Guarded by startedLock:
	started, stopped  bool
	controller        deltafifo.Controller
	queue             deltafifo.Queue // a *RealFIFO or a *DeltaFIFO, per queueKind
	transform         deltafifo.TransformFunc
	watchErrorHandler reflector.WatchErrorHandlerWithContext
	// resyncCheckPeriod is how often the reflector asks whether any handler
	// is due for a resync: the smallest handler period known before Run.
	resyncCheckPeriod               time.Duration
	defaultEventHandlerResyncPeriod time.Duration

	// synced is closed when the controller's queue has synced; it is the
	// informer's HasSynced and the upstream every registration waits for.
	synced chan struct{}
}

// SetWatchErrorHandler sets the handler told of list and watch failures.
// Unlike upstream's, nil puts back the default (upstream would call nil
// and crash at the first failure).
func (s *sharedIndexInformer) SetWatchErrorHandler(handler reflector.WatchErrorHandler) error {
	if handler == nil {
		return s.SetWatchErrorHandlerWithContext(nil)
	}
	return s.SetWatchErrorHandlerWithContext(func(_ context.Context, r *reflector.Reflector, err error) { handler(r, err) })
}

func (s *sharedIndexInformer) SetWatchErrorHandlerWithContext(handler reflector.WatchErrorHandlerWithContext) error {
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
// is done. It may run only once: a second call logs a warning through ctx's
// logger and returns, as upstream's does.
//
// A panic in its goroutine (the queue's Process: the cache write, an index
// function) is handed to utilruntime.HandleCrashWithContext on the way out,
// after the informer has stopped its processor, as upstream's: the
// PanicHandlers log it, then it is re-raised unless utilruntime.ReallyCrash
// is off (chapter 4's controller has already handled it by then; see
// deltafifo.Controller's RunWithContext).
func (s *sharedIndexInformer) RunWithContext(ctx context.Context) {
	defer utilruntime.HandleCrashWithContext(ctx)
	s.startedLock.Lock()
	if s.started {
		s.startedLock.Unlock()
		klog.FromContext(ctx).Info("Warning: the sharedIndexInformer has started, run more than once is not allowed")
		return
	}
	cfg := &deltafifo.Config{
		ListerWatcher:     s.listerWatcher,
		ObjectType:        s.objectType,
		ObjectDescription: s.objectDescription,
		Name:              s.name,
		FullResyncPeriod:  s.resyncCheckPeriod,
		ShouldResync:      s.processor.shouldResync,
		Process:           s.timedProcess(s.HandleDeltas),
		TracerProvider:    s.tp,
		ReflectorBackoff:  s.reflectorBackoff,
		BeforePop:         s.beforePop,

		WatchErrorHandlerWithContext: s.watchErrorHandler,
	}
	switch s.queueKind {
	case DeltaFIFOQueue:
		cfg.Queue = deltafifo.NewDeltaFIFOWithOptions(deltafifo.DeltaFIFOOptions{
			Name:                  s.name,
			KnownObjects:          s.indexer,
			EmitDeltaTypeReplaced: true,
			Transformer:           s.transform,
			TracerProvider:        s.tp,
			TraceFilter:           s.traceFilter,
		})
		// Pop what is queued in batches of keys, our own answer to the
		// RealFIFO's batch pops; see DeltaFIFO.PopKeys.
		cfg.KeysPerPop = keysPerPop
	default:
		// newQueueFIFO of v0.37.2 with its gates at their defaults. Atomic
		// events need no KnownObjects (the consumer reconciles a relist
		// against the cache itself), and the RealFIFO refuses them.
		cfg.Queue = deltafifo.NewRealFIFOWithOptions(deltafifo.RealFIFOOptions{
			Name:        s.name,
			KeyFunction: store.MetaNamespaceKeyFunc,
			Transformer: s.transform,
			// Ours: during a relist the queue hands back the cached object
			// for each one that did not change, so the relist holds no
			// second copy of the cache (see reflector.ReusingStore).
			RelistCache:           s.indexer,
			AtomicEvents:          true,
			UnlockWhileProcessing: true,
			EmitDeltaTypeBookmark: true,
			TracerProvider:        s.tp,
			TraceFilter:           s.traceFilter,
			QueuedItems:           s.queuedItemsObserver(),
		})
		cfg.ProcessBatch = s.timedBatch(s.handleBatchDeltas)
	}
	s.queue = cfg.Queue
	s.controller = deltafifo.New(cfg)
	s.started = true
	s.startedLock.Unlock()

	// The processor outlives ctx by a moment: it is stopped after the
	// controller, so notifications already distributed are not cut off
	// mid-handoff.
	procCtx, stopProcessor := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { s.processor.run(procCtx) })
	wg.Go(func() {
		select {
		case <-s.controller.HasSyncedChecker().Done():
			close(s.synced)
		case <-ctx.Done():
		}
	})
	defer func() {
		s.startedLock.Lock()
		s.stopped = true
		s.startedLock.Unlock()
		stopProcessor()
		wg.Wait()
	}()
	s.controller.RunWithContext(ctx)
}

// HasSynced is read from the synced channel, closed by a goroutine of
// RunWithContext when the queue's checker is done, as upstream: so it may
// turn true a moment after the queue's checker. On the DeltaFIFO that
// checker is done when Pop takes the last initial key, before its process
// call has written it to the cache (docs/04-deltafifo.md, "HasSynced").
func (s *sharedIndexInformer) HasSynced() bool { return IsDone(s.HasSyncedChecker()) }

func (s *sharedIndexInformer) HasSyncedChecker() DoneChecker { return informerChecker{s} }

// informerChecker is the informer's DoneChecker.
type informerChecker struct{ s *sharedIndexInformer }

func (c informerChecker) Name() string          { return fmt.Sprintf("SharedIndexInformer %T", c.s.objectType) }
func (c informerChecker) Done() <-chan struct{} { return c.s.synced }

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

func (s *sharedIndexInformer) AddEventHandlerWithResyncPeriod(handler ResourceEventHandler, resyncPeriod time.Duration) (ResourceEventHandlerRegistration, error) {
	return s.AddEventHandlerWithOptions(handler, HandlerOptions{ResyncPeriod: &resyncPeriod})
}

func (s *sharedIndexInformer) AddEventHandler(handler ResourceEventHandler) (ResourceEventHandlerRegistration, error) {
	return s.AddEventHandlerWithResyncPeriod(handler, s.defaultEventHandlerResyncPeriod)
}

// determineResyncPeriod fits a handler's wish to the informer's check period:
// 0 stays 0; an informer that does not resync cannot honour any period; a
// period shorter than the check period is raised to it. The last two are
// logged as warnings to logger, with upstream's words: a controller's
// author reads them to learn why a handler is not resynced as asked.
//
// Mirrors determineResyncPeriod (shared_informer.go).
func determineResyncPeriod(logger klog.Logger, desired, check time.Duration) time.Duration {
	switch {
	case desired == 0:
		return 0
	case check == 0:
		logger.Info("Warning: the specified resyncPeriod is invalid because this shared informer doesn't support resyncing", "desired", desired)
		return 0
	case desired < check:
		logger.Info("Warning: the specified resyncPeriod is being increased to the minimum resyncCheckPeriod", "desired", desired, "resyncCheckPeriod", check)
		return check
	}
	return desired
}

// AddEventHandlerWithOptions adds handler. A resync period it cannot honour
// is changed, and the change logged as a warning to options.Logger (by
// default klog.Background()), as upstream's.
func (s *sharedIndexInformer) AddEventHandlerWithOptions(handler ResourceEventHandler, options HandlerOptions) (ResourceEventHandlerRegistration, error) {
	resyncPeriod := s.defaultEventHandlerResyncPeriod
	if options.ResyncPeriod != nil {
		resyncPeriod = *options.ResyncPeriod
	}
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	if s.stopped {
		return nil, fmt.Errorf("handler %v was not added to shared informer because it has stopped already", handler)
	}
	logger := klog.Background()
	if options.Logger != nil {
		logger = *options.Logger
	}
	if resyncPeriod > 0 {
		if resyncPeriod < minimumResyncPeriod {
			logger.Info("Warning: resync period is too small. Changing it to the minimum allowed value", "resyncPeriod", resyncPeriod, "minimumResyncPeriod", minimumResyncPeriod)
			resyncPeriod = minimumResyncPeriod
		}
		if resyncPeriod < s.resyncCheckPeriod {
			if s.started {
				// The reflector's timer is already running at the check
				// period; this handler cannot be resynced more often.
				logger.Info("Warning: resync period is smaller than resync check period and the informer has already started. Changing it to the resync check period", "resyncPeriod", resyncPeriod, "resyncCheckPeriod", s.resyncCheckPeriod)
				resyncPeriod = s.resyncCheckPeriod
			} else {
				s.resyncCheckPeriod = resyncPeriod
				s.processor.resyncCheckPeriodChanged(logger, resyncPeriod)
			}
		}
	}
	l := newProcessListener(handler, s.processor.listenerName(handler), resyncPeriod,
		determineResyncPeriod(logger, resyncPeriod, s.resyncCheckPeriod), time.Now(), s.HasSyncedChecker(), s.tracer, s.nameAttr)
	l.logger = options.Logger
	l.counts.observe = s.handlerObserver(l.name)
	l.counts.enabled, l.counts.read = s.observer.HandlerEnabled, &s.processor.timed.Bool
	l.pendingObs = s.pendingObserver(l)
	if !s.started {
		s.processor.addListener(l)
		close(l.initialQueued)
		return l, nil
	}

	// Started: the new handler first hears of every cached object, with
	// deltas held off so nothing slips between the snapshot and the stream.
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	s.processor.addListener(l)
	// Only now may a zero count mean "synced": see processorListener.
	defer close(l.initialQueued)
	if !tracing.Enabled(s.tp) {
		for _, item := range s.indexer.List() {
			l.add(notification{kind: addKind, newObj: item, isInInitialList: true})
		}
		return l, nil
	}
	// Traced, walk by key: the root needs the key, and the TraceFilter is
	// asked with it; the cache already has it, where keying the object
	// again would allocate. Nothing writes the cache meanwhile (every write
	// holds blockDeltas), so this is the same snapshot List would give.
	for _, key := range s.indexer.ListKeys() {
		item, exists, err := s.indexer.GetByKey(key)
		if err != nil || !exists {
			continue
		}
		n := notification{kind: addKind, newObj: item, isInInitialList: true}
		var span trace.Span
		if s.traceFilter == nil || s.traceFilter(key, item) {
			span = s.startSyntheticAdd(&n, key)
		}
		// Left out by the filter, or its root by the sampler: what the
		// handler call starts stays out of the traces too.
		n.untraced = n.tr == nil
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

// HandleDeltas is the queue's Process function: it applies one pop (a
// key's Deltas from the DeltaFIFO, one entry from the RealFIFO, which may be
// a whole atomic relist or resync) to the cache and tells every handler of
// each change, through chapter 4's [deltafifo.Consumer]; see notify for the
// notification each change becomes. Writing the cache first means a handler
// that reads it (a lister) always finds at least the state it is told about.
//
// Mirrors sharedIndexInformer.handleDeltas (shared_informer.go) and
// processDeltas (controller.go).
func (s *sharedIndexInformer) HandleDeltas(obj any, isInInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	deltas, ok := obj.(deltafifo.Deltas)
	if !ok {
		return fmt.Errorf("object given as Process argument is a %T, not Deltas", obj)
	}
	return s.consumer.ProcessDeltas(deltas, isInInitialList)
}

// handleBatchDeltas is the RealFIFO's ProcessBatch: a run of entries for
// distinct keys, written to the cache in one transaction, then told to the
// handlers in queue order. blockDeltas is held for the whole batch, as
// upstream, so a late handler cannot join between a batch's cache write
// and its notifications.
//
// Mirrors sharedIndexInformer.handleBatchDeltas (shared_informer.go) and
// processDeltasInBatch (controller.go).
func (s *sharedIndexInformer) handleBatchDeltas(deltas []deltafifo.Delta, isInInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	return s.consumer.ProcessDeltasInBatch(deltas, isInInitialList)
}

// notify turns one change the consumer has applied to the cache into a
// notification for every handler, as upstream's sharedIndexInformer is the
// ResourceEventHandler of processDeltas:
//
//   - Deleted: OnDelete with the object or its DeletedFinalStateUnknown;
//   - nothing cached before (old == nil): OnAdd, with isInInitialList;
//   - otherwise OnUpdate(old, new), sent only to the listeners marked as
//     syncing when old and new have the same resourceVersion (a resync, or a
//     relist of an unchanged object). Every listener starts marked and only
//     a resync check unmarks it, so with no resync period all get it.
//
// It runs under blockDeltas (the consumer is only called from HandleDeltas
// and handleBatchDeltas). With ctx carrying a recording HandleDeltas span,
// the fan-out gets its distribute span under it; the cache write's
// Indexer.* span is the consumer's.
//
// Mirrors sharedIndexInformer.OnAdd, OnUpdate and OnDelete (shared_informer.go).
func (s *sharedIndexInformer) notify(ctx context.Context, d deltafifo.Delta, old any, isInInitialList bool) {
	s.tellStored(d, old)
	var n notification
	isSync := false
	switch {
	case d.Type == deltafifo.Deleted:
		n = notification{kind: deleteKind, oldObj: d.Object}
	case old == nil:
		n = notification{kind: addKind, newObj: d.Object, isInInitialList: isInInitialList}
	default:
		n = notification{kind: updateKind, oldObj: old, newObj: d.Object}
		isSync = sameResourceVersion(old, d.Object)
	}
	if !trace.SpanFromContext(ctx).IsRecording() {
		// Not traced: its object was left out by the TraceFilter or its
		// root by the sampler, which chapter 4 drops alike (nil trace).
		// Either way the change's trace is absent, and what its handler
		// calls start must be too: the call is marked, so that a
		// CallSpanHandler is told (see CallSpanHandler).
		n.untraced = tracing.Enabled(s.tp)
		s.processor.distribute(n, isSync)
		return
	}
	key, _ := deltafifo.DeletionHandlingMetaNamespaceKeyFunc(d.Object)
	// Made safe once (tracing.Value) and carried in n.tr for every
	// listener's spans.
	key = tracing.Value(key)
	dctx, span := s.tracer.Start(ctx, tracing.SpanDistribute, internal, trace.WithAttributes(s.nameAttr, tracing.KeyObjectKey.String(key)))
	n.tr = &notificationTrace{parent: trace.SpanContextFromContext(dctx), key: key}
	s.processor.distribute(n, isSync)
	span.End()
}

// startSyntheticAdd starts the root of a late handler's synthetic add of
// the object cached under key: "AddEventHandler" (INTERNAL), under which
// its addCh chain hangs.
func (s *sharedIndexInformer) startSyntheticAdd(n *notification, key string) trace.Span {
	key = tracing.Value(key)
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
