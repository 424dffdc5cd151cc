package deltafifo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// ProcessFunc consumes one popped item (a Deltas) and whether it belongs to
// the initial list.
//
// Mirrors [k8s.io/client-go/tools/cache.ProcessFunc] (controller.go).
type ProcessFunc func(obj any, isInInitialList bool) error

// Config wires a queue, a ListerWatcher and a consumer into a Controller.
//
// Mirrors [k8s.io/client-go/tools/cache.Config] (controller.go), without
// the clock.
type Config struct {
	// Queue is where the reflector writes and processLoop pops from.
	Queue
	// ListerWatcher lists and watches the resource.
	reflector.ListerWatcher
	// Process is called for every popped item, one at a time, in order.
	Process ProcessFunc
	// ProcessBatch, if set and Queue is a [QueueWithBatch] (the RealFIFO),
	// makes processLoop pop with PopBatch: runs of entries for distinct keys
	// go to ProcessBatch, single entries to Process. It should return a
	// [store.TransactionError] (wrapped) when only part of a batch was
	// applied. client-go also requires the InOrderInformersBatchProcess
	// feature gate, on by default since 1.35; we have no gates.
	ProcessBatch ProcessBatchFunc
	// ObjectType is an example of the objects; the reflector drops others.
	ObjectType runtime.Object
	// ObjectDescription names the type in messages; default from ObjectType.
	ObjectDescription string
	// FullResyncPeriod is the reflector's resync period (0: never).
	FullResyncPeriod time.Duration
	// MinWatchTimeout raises the reflector's minimum watch timeout.
	MinWatchTimeout time.Duration
	// ShouldResync is asked before each resync.
	ShouldResync func() bool
	// WatchErrorHandler is told of list and watch failures.
	WatchErrorHandler reflector.WatchErrorHandler
	// WatchErrorHandlerWithContext is WatchErrorHandler with the
	// reflector's context; used only when WatchErrorHandler is nil.
	WatchErrorHandlerWithContext reflector.WatchErrorHandlerWithContext
	// WatchListPageSize is the reflector's LIST page size.
	WatchListPageSize int64
	// ReflectorBackoff, if set, replaces the reflector's default retry
	// pacing (reflector.DefaultBackoff: 800ms doubling to 30s), as
	// ReflectorOptions.Backoff does. Not in client-go's Config: upstream's
	// ReflectorOptions has Backoff, but neither Config nor the shared
	// informer passes one on (a TODO in reflector.go, kubernetes#136943).
	// Ours so that tests of a whole informer need not wait out real
	// backoffs; nil keeps the default.
	ReflectorBackoff *reflector.Backoff
	// KeysPerPop, if above 1, makes processLoop pop up to this many queued
	// keys per lock hold (DeltaFIFO.PopKeys) from a queue that is not a
	// QueueWithBatch or when ProcessBatch is nil. Not in client-go's Config.
	KeysPerPop int
	// BeforePop, if set, is called by processLoop before each Pop, PopKeys
	// or PopBatch, with processLoop's context, and the loop pops only once
	// it returns; if ctx is done by then, the loop ends without popping.
	// It runs where the loop holds no lock, so while it blocks the
	// reflector keeps queueing and nothing is popped: a caller can hold
	// the queue's consumer back until the queue holds what it wants popped
	// together (the demo's queue lessons do, to make a DeltaFIFO coalesce
	// on every run). It should return soon after ctx is done, or the
	// informer cannot stop. nil costs nothing. Ours, not in client-go's
	// Config: there a test that wants deltas queued together can only
	// race the pop loop.
	BeforePop func(ctx context.Context)
	// Name is the informer's name in spans; default ObjectDescription.
	Name string
	// TracerProvider for the reflector's spans.
	TracerProvider trace.TracerProvider
}

// Controller runs a reflector and a processLoop.
//
// Mirrors [k8s.io/client-go/tools/cache.Controller] (controller.go).
type Controller interface {
	Run(stopCh <-chan struct{})
	RunWithContext(ctx context.Context)
	// HasSynced: the queue has handed out the whole initial list.
	HasSynced() bool
	// HasSyncedChecker is the queue's: its Done closes when HasSynced
	// becomes true.
	HasSyncedChecker() DoneChecker
	LastSyncResourceVersion() string
}

// New returns a Controller for c.
//
// Mirrors [k8s.io/client-go/tools/cache.New] (controller.go).
func New(c *Config) Controller {
	return &controller{config: *c}
}

type controller struct {
	config Config

	reflectorMu sync.RWMutex
	reflector   *reflector.Reflector // guarded by reflectorMu; set by Run
}

func (c *controller) Run(stopCh <-chan struct{}) {
	c.RunWithContext(wait.ContextForChannel(stopCh))
}

// RunWithContext starts the reflector writing into the queue and pops the
// queue into Process until ctx is done. Stopping closes the queue, which
// wakes a blocked Pop; it returns when both goroutines are gone, after the
// queue has ended the traces of the deltas it still held (see
// DeltaFIFO.endQueuedAsDropped). That last step is not in client-go, whose
// queue keeps them silently.
//
// A panic in Process is handled as upstream's: processLoop runs under
// wait.UntilWithContext, whose utilruntime.HandleCrashWithContext calls the
// PanicHandlers and re-panics, and RunWithContext's own deferred one does
// so again on the way out. With utilruntime.ReallyCrash off the first one
// swallows the panic, the delta being processed is lost, and popping
// resumes a second later: the informer keeps running. Without them a panic
// would skip the PanicHandlers (no log line) and, with ReallyCrash off,
// still end the informer, where client-go's keeps going.
func (c *controller) RunWithContext(ctx context.Context) {
	defer utilruntime.HandleCrashWithContext(ctx)
	go func() {
		<-ctx.Done()
		c.config.Queue.Close()
	}()
	name := c.config.Name
	if name == "" {
		name = c.config.ObjectDescription
	}
	r := reflector.NewReflectorWithOptions(c.config.ListerWatcher, c.config.ObjectType, c.config.Queue,
		reflector.ReflectorOptions{
			Name:            name,
			TypeDescription: c.config.ObjectDescription,
			ResyncPeriod:    c.config.FullResyncPeriod,
			MinWatchTimeout: c.config.MinWatchTimeout,
			Backoff:         c.config.ReflectorBackoff,
			TracerProvider:  c.config.TracerProvider,
		})
	r.ShouldResync = c.config.ShouldResync
	r.WatchListPageSize = c.config.WatchListPageSize
	if c.config.WatchErrorHandler != nil {
		r.SetWatchErrorHandler(c.config.WatchErrorHandler)
	} else if c.config.WatchErrorHandlerWithContext != nil {
		r.SetWatchErrorHandlerWithContext(c.config.WatchErrorHandlerWithContext)
	}
	c.reflectorMu.Lock()
	c.reflector = r
	c.reflectorMu.Unlock()

	var wg sync.WaitGroup
	wg.Go(func() { r.RunWithContext(ctx) })
	// The period matters only after a panic in Process (with ReallyCrash
	// off): processLoop returns otherwise only when ctx is done.
	wait.UntilWithContext(ctx, c.processLoop, time.Second)
	wg.Wait()
	// Only now: with the reflector gone nothing more is queued, and with
	// processLoop gone nothing more is popped, so every delta still queued
	// was dropped by this stop. Any queue may take part (the RealFIFO has
	// the same method); one without it is left as it is.
	if q, ok := c.config.Queue.(interface{ endQueuedAsDropped() }); ok {
		q.endQueuedAsDropped()
	}
}

// processLoop pops until the queue is closed, in one of three ways:
//
//   - a [QueueWithBatch] (the RealFIFO) with Config.ProcessBatch set:
//     PopBatch, as upstream's processLoop with InOrderInformersBatchProcess;
//   - a DeltaFIFO with Config.KeysPerPop above 1: DeltaFIFO.PopKeys, our
//     own batching of the DeltaFIFO path;
//   - otherwise Pop, one entry (or one key's Deltas) per call.
//
// Before each pop it calls Config.BeforePop, if set (ours): between two
// pops is the one place the loop holds no lock, so the only place a caller
// can hold it back without also holding off the reflector's writes (both
// queues' pops take the queue's lock, and the DeltaFIFO's keeps it while
// process runs).
//
// A process error is dropped, as upstream does since the queue stopped
// requeueing on error: the consumer is expected to handle its own failures
// (chapter 5's handlers cannot fail).
//
// Mirrors controller.processLoop (client-go controller.go).
func (c *controller) processLoop(ctx context.Context) {
	process := PopProcessFunc(c.config.Process)
	realBatcher, realBatched := c.config.Queue.(QueueWithBatch)
	realBatched = realBatched && c.config.ProcessBatch != nil
	keyBatcher, keyBatched := c.config.Queue.(interface {
		PopKeys(PopProcessFunc, int) (int, error)
	})
	keyBatched = keyBatched && c.config.KeysPerPop > 1
	for ctx.Err() == nil {
		if c.config.BeforePop != nil {
			c.config.BeforePop(ctx)
			// A hook released by the stop: no pop after it, or a closed
			// DeltaFIFO would still hand out what it holds.
			if ctx.Err() != nil {
				return
			}
		}
		var err error
		switch {
		case realBatched:
			err = realBatcher.PopBatch(c.config.ProcessBatch, process)
		case keyBatched:
			_, err = keyBatcher.PopKeys(process, c.config.KeysPerPop)
		default:
			_, err = c.config.Queue.Pop(process)
		}
		if errors.Is(err, ErrFIFOClosed) {
			return
		}
	}
}

func (c *controller) HasSynced() bool { return c.config.Queue.HasSynced() }

func (c *controller) HasSyncedChecker() DoneChecker { return c.config.Queue.HasSyncedChecker() }

func (c *controller) LastSyncResourceVersion() string {
	c.reflectorMu.RLock()
	defer c.reflectorMu.RUnlock()
	if c.reflector == nil {
		return ""
	}
	return c.reflector.LastSyncResourceVersion()
}

// InformerProcessFunc is told of one change after the informer's cache has
// it. old is what the cache held for the key before (nil if nothing);
// d.Object is the new state (for Deleted: the deleted object or a
// [DeletedFinalStateUnknown]). ctx carries the change's HandleDeltas span
// when it is traced, else it is context.Background().
//
// d.Type is the popped delta's type, except for the changes an atomic entry
// expands into: a relist's listed objects come as Replaced and its
// tombstones as Deleted, and a resync's objects as Sync with old == d.Object.
// So a receiver maps it to a ResourceEventHandler as upstream's
// processDeltas does: Deleted → OnDelete(d.Object); old == nil → OnAdd;
// otherwise OnUpdate(old, d.Object).
//
// Chapter 5's HandleDeltas turns it into distribute calls; here it is one
// function so that chapter 4 stands alone.
type InformerProcessFunc func(ctx context.Context, d Delta, old any, isInInitialList bool)

// NewInformer returns a store that follows lw and a Controller to run it;
// process is called for every change, after the store has it (see
// [Consumer]).
//
// Mirrors [k8s.io/client-go/tools/cache.NewInformer] (controller.go), with a
// function instead of a ResourceEventHandler (see InformerProcessFunc). By
// default it queues on the DeltaFIFO, which client-go's informers ran up to
// 1.32 (1.33 made the RealFIFO their default); [WithRealFIFO] gives client-go's v0.37.2 queue.
func NewInformer(lw reflector.ListerWatcher, objType runtime.Object, resyncPeriod time.Duration, process InformerProcessFunc, opts ...InformerOption) (store.Store, Controller) {
	cfg := informerConfig{name: ""}
	for _, o := range opts {
		o(&cfg)
	}
	clientState := store.NewStore(DeletionHandlingMetaNamespaceKeyFunc)
	consumer := &Consumer{
		Store:   clientState,
		KeyFunc: DeletionHandlingMetaNamespaceKeyFunc,
		Handler: process,
		Tracer:  tracing.Tracer(cfg.tp, tracerName),
		Name:    cfg.name,
	}
	config := &Config{
		ListerWatcher:    lw,
		ObjectType:       objType,
		FullResyncPeriod: resyncPeriod,
		Name:             cfg.name,
		TracerProvider:   cfg.tp,
		Process: func(obj any, isInInitialList bool) error {
			deltas, ok := obj.(Deltas)
			if !ok {
				return fmt.Errorf("process was given a %T, not Deltas", obj)
			}
			return consumer.ProcessDeltas(deltas, isInInitialList)
		},
	}
	if cfg.realFIFO {
		config.Queue = NewRealFIFOWithOptions(realFIFODefaults(cfg.name, cfg.tp))
		config.ProcessBatch = consumer.ProcessDeltasInBatch
	} else {
		config.Queue = NewDeltaFIFOWithOptions(DeltaFIFOOptions{
			Name:                  cfg.name,
			KnownObjects:          clientState,
			EmitDeltaTypeReplaced: true,
			TracerProvider:        cfg.tp,
		})
	}
	return clientState, New(config)
}

// realFIFODefaults is the RealFIFO client-go v0.37.2's informers build
// (newQueueFIFO in controller.go, with its feature gates at their
// defaults): atomic relists and resyncs, so no KnownObjects; unlocked while
// processing; bookmarks queued.
func realFIFODefaults(name string, tp trace.TracerProvider) RealFIFOOptions {
	return RealFIFOOptions{
		Name:                  name,
		KeyFunction:           store.MetaNamespaceKeyFunc,
		AtomicEvents:          true,
		UnlockWhileProcessing: true,
		EmitDeltaTypeBookmark: true,
		TracerProvider:        tp,
	}
}

// InformerOption configures NewInformer.
type InformerOption func(*informerConfig)

type informerConfig struct {
	name     string
	tp       trace.TracerProvider
	realFIFO bool
}

// WithName names the informer in spans (informer.name).
func WithName(name string) InformerOption { return func(c *informerConfig) { c.name = name } }

// WithTracerProvider sets the TracerProvider for all of the informer's spans.
func WithTracerProvider(tp trace.TracerProvider) InformerOption {
	return func(c *informerConfig) { c.tp = tp }
}

// WithRealFIFO makes NewInformer queue on a [RealFIFO] configured as
// client-go v0.37.2's informers are (newQueueFIFO: atomic events, unlock
// while processing, bookmarks) and pop it in batches through
// [Consumer.ProcessDeltasInBatch]: the informer client-go users run today.
func WithRealFIFO() InformerOption { return func(c *informerConfig) { c.realFIFO = true } }
