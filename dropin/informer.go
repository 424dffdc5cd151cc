package dropin

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
	"github.com/informer-anatomy/informer-anatomy/liveprobe"
)

// The compile-time promise of this package: what the constructors return
// can go wherever client-go's informer, cache, registration and checker go.
var (
	_ cache.SharedIndexInformer                   = (*Informer)(nil)
	_ cache.Indexer                               = indexer{}
	_ cache.ResourceEventHandlerRegistration      = (*registration)(nil)
	_ interface{ ShutdownChan() <-chan struct{} } = (*registration)(nil)
	_ cache.DoneChecker                           = processor.DoneChecker(nil)
	_ cache.Controller                            = controller{}
)

// NewSharedInformer returns our informer (chapter 5) as a
// [k8s.io/client-go/tools/cache.SharedInformer].
//
// Mirrors [k8s.io/client-go/tools/cache.NewSharedInformer] (shared_informer.go).
func NewSharedInformer(lw cache.ListerWatcher, exampleObject runtime.Object, defaultEventHandlerResyncPeriod time.Duration) cache.SharedInformer {
	return newInformer(lw, exampleObject, cache.SharedIndexInformerOptions{ResyncPeriod: defaultEventHandlerResyncPeriod})
}

// NewSharedIndexInformer returns our informer (chapter 5) as a
// [k8s.io/client-go/tools/cache.SharedIndexInformer]. Its signature is
// controller-runtime's cache.Options.NewInformer, so it can be given there
// as it is.
//
// Mirrors [k8s.io/client-go/tools/cache.NewSharedIndexInformer] (shared_informer.go).
func NewSharedIndexInformer(lw cache.ListerWatcher, exampleObject runtime.Object, defaultEventHandlerResyncPeriod time.Duration, indexers cache.Indexers) cache.SharedIndexInformer {
	return newInformer(lw, exampleObject, cache.SharedIndexInformerOptions{ResyncPeriod: defaultEventHandlerResyncPeriod, Indexers: indexers})
}

// NewSharedIndexInformerWithOptions returns our informer (chapter 5) as a
// [k8s.io/client-go/tools/cache.SharedIndexInformer].
//
// Mirrors [k8s.io/client-go/tools/cache.NewSharedIndexInformerWithOptions] (shared_informer.go).
// options.Identifier and options.InformerMetricsProvider are honoured as
// client-go honours them: the informer's three metrics go to that
// provider, else to cache.SetInformerMetricsProvider's, and only for a
// reserved Identifier (metrics.go).
func NewSharedIndexInformerWithOptions(lw cache.ListerWatcher, exampleObject runtime.Object, options cache.SharedIndexInformerOptions) cache.SharedIndexInformer {
	return newInformer(lw, exampleObject, options)
}

// Informer is the concrete type every constructor of this package returns:
// chapter 5's shared informer, on chapter 4's RealFIFO (client-go's queue)
// and chapter 3's reflector, behind client-go's interface. client-go's types
// appear only at its edges: handlers, index functions, the transform and
// watch error handlers are adapted on the way in, tombstones and the cache
// on the way out.
//
// What client-go's constructors have no room for is set on it, before Run:
// [Informer.SetTracerProvider] and [Informer.SetTraceFilter]. Reach it with a
// type assertion on what a constructor returned:
//
//	inf := dropin.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, nil)
//	_ = inf.(*dropin.Informer).SetTraceFilter(deltafifo.TraceKeys("default/web"))
//
// or with [InformerOf] on what a factory's generated accessor returns
// (client-go 1.37 wraps it in cache.TypedSharedIndexInformer, where the
// assertion fails):
//
//	inf, _ := dropin.InformerOf(factory.Core().V1().Pods().Informer())
//
// Ours: client-go's concrete informer is unexported.
type Informer struct {
	inner       processor.SharedIndexInformer
	indexer     indexer
	tp          *tracing.Switchable
	description string
	metrics     *informerMetrics
	lw          cache.ListerWatcher
	example     runtime.Object

	// filter is what SetTraceFilter set (nil: none), read through
	// traceFilter by the queue for every object's root and by
	// AddEventHandler: an atomic load, not a lock, on that per-event path.
	filter atomic.Pointer[TraceFilter]

	// upstream is the client-go Reflector a watch error handler is given;
	// made once, on the first error, and never run (see reflectorForHandlers).
	upstreamOnce sync.Once
	upstream     *cache.Reflector

	// bytes is the live view's estimate of what the cache holds
	// (liveprobe.CacheBytes); it counts once a live view exists.
	bytes liveprobe.CacheBytes
}

func newInformer(lw cache.ListerWatcher, exampleObject runtime.Object, options cache.SharedIndexInformerOptions) *Informer {
	i := &Informer{tp: &tracing.Switchable{}, lw: lw, example: exampleObject}
	i.description = options.ObjectDescription
	if i.description == "" {
		// client-go leaves it to its reflector, which describes an
		// Unstructured by its GVK (chapter 3's TypeDescription).
		i.description = reflector.TypeDescription(exampleObject)
	}
	mx := newInformerMetrics(options, exampleObject, i.description, nil)
	i.metrics = mx
	ours := processor.SharedIndexInformerOptions{
		ResyncPeriod:      options.ResyncPeriod,
		Indexers:          toOurIndexers(options.Indexers),
		ObjectDescription: i.description,
		Name:              informerName(options, exampleObject),
		TracerProvider:    i.tp,
		TraceFilter:       i.traceFilter,
		Observer:          mx.observer(),
	}
	ours.Observer.Stored = i.bytes.Stored
	// lw goes to chapter 3 behind the live view's probe (liveview.go),
	// which forwards the reflector's List and Watch calls (with or without
	// a context) and passes on IsWatchListSemanticsUnSupported:
	// client-go's ListerWatcher has our ListerWatcher's methods, and the
	// reflector finds the optional ones (WithContext,
	// IsWatchListSemanticsUnSupported) by the same method names client-go's
	// does, so a factory's opt-out of watch-list for a fake client reaches
	// our reflector too.
	probe := liveprobe.NewLazyReflectorProbe(lw, liveViewOn.Load)
	// The byte estimate learns from the probe when a stream's objects are
	// transformed twice (liveprobe.CacheBytes.Transform).
	i.bytes.Follow(probe)
	i.inner = processor.NewSharedIndexInformerWithOptions(probe, exampleObject, ours)
	i.indexer = indexer{Indexer: i.inner.GetIndexer(), owner: i}
	mx.store = i.inner.GetIndexer()
	// An informer dropped without running must not keep its handlers'
	// series (nor their claim on the labels). The cleanup holds mx, which
	// does not hold i.
	goruntime.AddCleanup(i, (*informerMetrics).removeAll, mx)
	registerInformer(i, probe, exampleObject, options) // the live view's (registry.go)
	return i
}

// informerName is the informer.name of the spans: the resource a factory
// named in Identifier (client-go's factory does when it has an informer
// name), else the description the caller gave, else what chapter 5 falls
// back to, the example object's type description: its Go type, or for an
// *unstructured.Unstructured with apiVersion and kind set its GVK
// ("example.com/v1, Kind=Widget"), as client-go's reflector describes it.
// controller-runtime's cache gives neither Identifier nor description,
// and an Unstructured for every CRD; without the GVK all its unstructured
// informers would share one name.
//
// A *metav1.PartialObjectMetadata with its GVK set (what a
// controller-runtime metadata-only informer is given) is named
// "<GVK> (metadata)": ours, client-go describes it by its Go type, which
// every metadata-only informer shares.
func informerName(options cache.SharedIndexInformerOptions, exampleObject runtime.Object) string {
	if r := options.Identifier.GroupVersionResource().Resource; r != "" {
		return r
	}
	if options.ObjectDescription != "" {
		return options.ObjectDescription
	}
	if m, ok := exampleObject.(*metav1.PartialObjectMetadata); ok && m != nil {
		if gvk := m.GroupVersionKind(); !gvk.Empty() {
			return gvk.String() + " (metadata)"
		}
	}
	return ""
}

// traceFilter is what chapter 5 asks for each object's root. It is always
// set (chapter 5's options are fixed at construction, the filter is not);
// with no filter set it says yes, which is what chapter 5's nil filter
// means. It is asked only when tracing is on. A key chosen on the live
// view's page (LiveViewTraceOneKey) narrows it to that key: it never
// starts a trace the informer's own filter would not.
func (i *Informer) traceFilter(key string, obj any) bool {
	if k := liveTraceKey.Load(); k != nil && *k != key {
		return false
	}
	f := i.filter.Load()
	return f == nil || (*f)(key, obj)
}

// SetTracerProvider sets the provider of every span this informer makes;
// until it is called, or after it is called with nil, the informer follows
// the global provider (otel.SetTracerProvider), even one set later.
// It takes effect at once; call it before Run so that no trace is cut in
// two providers.
//
// Ours: client-go's informer does not trace.
func (i *Informer) SetTracerProvider(tp trace.TracerProvider) error {
	i.tp.Set(tp)
	return nil
}

// SetTraceFilter traces only the objects f selects (build one with
// chapter 4's [deltafifo.TraceKeys] or [deltafifo.TraceSelector]); nil
// traces every object. It is asked
// once per delta, where the object's root would start. Like SetTransform it
// must be called before Run. A key chosen on the live view's page
// ([LiveViewTraceOneKey]) narrows it further while it is chosen.
//
// Ours: see chapter 5's SharedIndexInformerOptions.TraceFilter.
func (i *Informer) SetTraceFilter(f TraceFilter) error {
	if i.inner.IsStopped() {
		return fmt.Errorf("trace filter not set: the informer has already stopped")
	}
	if f == nil {
		i.filter.Store(nil)
	} else {
		i.filter.Store(&f)
	}
	return nil
}

// TraceFilter selects the objects that get a trace. This package builds
// none of its own: use chapter 4's deltafifo.TraceKeys or
// deltafifo.TraceSelector, or write one.
//
// Mirrors our [deltafifo.TraceFilter] (chapters/04-deltafifo/tracing.go); not in client-go.
type TraceFilter = deltafifo.TraceFilter

// AddEventHandler adds handler with the informer's default resync period.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedInformer.AddEventHandler].
func (i *Informer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return i.register(i.inner.AddEventHandler(wrapHandler(h)))
}

// AddEventHandlerWithResyncPeriod adds handler with its own resync period.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedInformer.AddEventHandlerWithResyncPeriod].
func (i *Informer) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, resyncPeriod time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return i.register(i.inner.AddEventHandlerWithResyncPeriod(wrapHandler(h), resyncPeriod))
}

// AddEventHandlerWithOptions adds handler with options.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedInformer.AddEventHandlerWithOptions].
func (i *Informer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, options cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return i.register(i.inner.AddEventHandlerWithOptions(wrapHandler(h), processor.HandlerOptions{
		Logger: options.Logger, ResyncPeriod: options.ResyncPeriod,
	}))
}

func (i *Informer) register(r processor.ResourceEventHandlerRegistration, err error) (cache.ResourceEventHandlerRegistration, error) {
	if err != nil {
		return nil, err
	}
	return &registration{inner: r}, nil
}

// RemoveEventHandler removes the handler handle was returned for; removing
// one twice is not an error. It returns at once: see
// [k8s.io/client-go/tools/cache.ShutDownEventHandler] to wait for the
// handler's last call, which works on our handles too.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedInformer.RemoveEventHandler].
func (i *Informer) RemoveEventHandler(handle cache.ResourceEventHandlerRegistration) error {
	if r, ok := handle.(*registration); ok {
		err := i.inner.RemoveEventHandler(r.inner)
		if n, ok := r.inner.(interface{ HandlerName() string }); ok && err == nil {
			// Its series go with it: a process that adds and removes
			// handlers keeps a bounded number of series.
			i.metrics.removeHandler(n.HandlerName())
		}
		return err
	}
	// Not one of ours. client-go refuses a foreign handle too, though its
	// message formats the handle with %t (a Printf error in the text).
	return fmt.Errorf("invalid key type %T", handle)
}

// GetStore returns the informer's cache.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedInformer.GetStore].
func (i *Informer) GetStore() cache.Store { return i.indexer }

// GetIndexer returns the informer's cache.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedIndexInformer.GetIndexer].
func (i *Informer) GetIndexer() cache.Indexer { return i.indexer }

// AddIndexers adds index functions, before or after Run.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedIndexInformer.AddIndexers].
func (i *Informer) AddIndexers(indexers cache.Indexers) error {
	return i.inner.AddIndexers(toOurIndexers(indexers))
}

// GetController returns a Controller whose Run does nothing and whose other
// methods ask the informer, as client-go's does: a shared informer is run
// by its owner, not through its controller.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedInformer.GetController] (dummyController).
func (i *Informer) GetController() cache.Controller { return controller{i} }

// Run runs the informer until stopCh is closed.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedInformer.Run].
// Once it returns with the informer stopped, the handlers' series are
// dropped (metrics.go); a second Run, which returns at once, leaves them.
func (i *Informer) Run(stopCh <-chan struct{}) {
	i.inner.Run(stopCh)
	i.stopped()
}

func (i *Informer) stopped() {
	if i.inner.IsStopped() {
		i.metrics.removeAll()
	}
}

// RunWithContext runs the informer until ctx is done.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedInformer.RunWithContext].
// Once it returns with the informer stopped, the handlers' series are
// dropped (metrics.go).
func (i *Informer) RunWithContext(ctx context.Context) {
	i.inner.RunWithContext(ctx)
	i.stopped()
}

// HasSynced reports whether the initial state has reached the cache and
// the handlers added before Run.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedInformer.HasSynced].
func (i *Informer) HasSynced() bool { return i.inner.HasSynced() }

// HasSyncedChecker returns a checker whose Done channel closes when
// HasSynced becomes true.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedInformer.HasSyncedChecker].
func (i *Informer) HasSyncedChecker() cache.DoneChecker { return i.inner.HasSyncedChecker() }

// LastSyncResourceVersion is the resourceVersion the reflector last saw.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedInformer.LastSyncResourceVersion].
func (i *Informer) LastSyncResourceVersion() string { return i.inner.LastSyncResourceVersion() }

// IsStopped reports whether the informer has stopped.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedInformer.IsStopped].
func (i *Informer) IsStopped() bool { return i.inner.IsStopped() }

// SetTransform sets the function every object passes through before it is
// queued and cached; before Run only.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedInformer.SetTransform].
func (i *Informer) SetTransform(handler cache.TransformFunc) error {
	if handler == nil {
		return i.inner.SetTransform(nil)
	}
	// Wrapped for the live view's "before the transform" (ours: it sizes
	// what the transform is given and returns once a live view exists,
	// and changes nothing the transform or the handlers see).
	return i.inner.SetTransform(deltafifo.TransformFunc(i.bytes.Transform(handler)))
}

// SetWatchErrorHandler sets what is called when a LIST or WATCH fails;
// before Run only. handler is given a client-go Reflector that describes
// ours (the same type description, so DefaultWatchErrorHandler's message
// reads as client-go's would) but never runs: read the error, not the
// reflector's state.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedInformer.SetWatchErrorHandler].
func (i *Informer) SetWatchErrorHandler(handler cache.WatchErrorHandler) error {
	if handler == nil {
		return i.inner.SetWatchErrorHandler(nil)
	}
	return i.inner.SetWatchErrorHandler(func(_ *reflector.Reflector, err error) {
		handler(i.reflectorForHandlers(), err)
	})
}

// SetWatchErrorHandlerWithContext is SetWatchErrorHandler with the
// informer's context; before Run only.
//
// Mirrors [k8s.io/client-go/tools/cache.SharedInformer.SetWatchErrorHandlerWithContext].
func (i *Informer) SetWatchErrorHandlerWithContext(handler cache.WatchErrorHandlerWithContext) error {
	if handler == nil {
		return i.inner.SetWatchErrorHandlerWithContext(nil)
	}
	return i.inner.SetWatchErrorHandlerWithContext(func(ctx context.Context, _ *reflector.Reflector, err error) {
		handler(ctx, i.reflectorForHandlers(), err)
	})
}

// reflectorForHandlers is the *cache.Reflector a client-go watch error
// handler needs: client-go's handlers take its concrete type, which only
// client-go can make, so we make one with our reflector's description and
// never run it. Its own state (LastSyncResourceVersion) stays empty.
func (i *Informer) reflectorForHandlers() *cache.Reflector {
	i.upstreamOnce.Do(func() {
		i.upstream = cache.NewReflectorWithOptions(i.lw, i.example, cache.NewStore(cache.MetaNamespaceKeyFunc),
			cache.ReflectorOptions{Name: i.description, TypeDescription: i.description})
	})
	return i.upstream
}

// controller is GetController's answer.
type controller struct{ i *Informer }

func (controller) Run(<-chan struct{})                   {}
func (controller) RunWithContext(context.Context)        {}
func (c controller) HasSynced() bool                     { return c.i.HasSynced() }
func (c controller) HasSyncedChecker() cache.DoneChecker { return c.i.HasSyncedChecker() }
func (c controller) LastSyncResourceVersion() string     { return c.i.LastSyncResourceVersion() }

// registration is what AddEventHandler returns: chapter 5's registration
// behind client-go's interface.
type registration struct {
	inner processor.ResourceEventHandlerRegistration
}

// HasSynced: the informer has synced and every initial-list OnAdd to this
// handler has returned.
func (r *registration) HasSynced() bool { return r.inner.HasSynced() }

// HasSyncedChecker's Done closes when HasSynced becomes true.
func (r *registration) HasSyncedChecker() cache.DoneChecker { return r.inner.HasSyncedChecker() }

// ShutdownChan closes when the handler's last call has returned after
// removal: [k8s.io/client-go/tools/cache.ShutDownEventHandler] looks for
// this method by name and waits on it.
func (r *registration) ShutdownChan() <-chan struct{} {
	return r.inner.(interface{ ShutdownChan() <-chan struct{} }).ShutdownChan()
}
