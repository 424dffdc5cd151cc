package dropin

import (
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/internal/metrics"
)

// WorkqueueMetricsProvider returns client-go's workqueue.MetricsProvider
// on OpenTelemetry instruments of the global MeterProvider: the seven
// workqueue_* metrics with component-base's names, meanings, buckets and
// label name. It is the OpenTelemetry route; with Prometheus, blank-import
// k8s.io/component-base/metrics/prometheus/workqueue instead, as for any
// client-go queue.
//
// Give it where client-go takes a provider: a queue config's
// MetricsProvider (the inner queue of a traced queue included: a traced
// queue reports nothing of its own, its inner queue reports through the
// provider it was given), workqueue.SetProvider once before any queue is
// made (the first call wins), or controller-runtime's
// priorityqueue.Opts.MetricProvider.
//
// Ours: mirrors k8s.io/component-base/metrics/prometheus/workqueue, on
// OpenTelemetry instead of Prometheus.
func WorkqueueMetricsProvider() workqueue.MetricsProvider { return metrics.WorkqueueProvider{} }

// InformerMetricsProvider returns client-go's cache.InformerMetricsProvider
// on OpenTelemetry instruments of the global MeterProvider:
// informer_queued_items, informer_processing_latency_seconds and
// informer_store_resource_version with component-base's names, help,
// buckets and labels, recording only while the informer's Identifier is
// reserved. It is the OpenTelemetry route; with Prometheus, blank-import
// k8s.io/component-base/metrics/prometheus/clientgo/fifo instead. Give it
// to cache.SetInformerMetricsProvider (the first call wins) or to
// SharedIndexInformerOptions.InformerMetricsProvider; it serves client-go's
// informers and ours alike.
//
// Ours: mirrors k8s.io/component-base/metrics/prometheus/clientgo/fifo, on
// OpenTelemetry instead of Prometheus.
func InformerMetricsProvider() cache.InformerMetricsProvider { return metrics.InformerProvider{} }

// HandlerMetricsProvider makes our two per-handler metrics,
// informer_handler_pending_notifications and
// informer_handler_processing_latency_seconds, in the shape of client-go's
// cache.InformerMetricsProvider: a New method per metric, called once per
// handler when the handler is added, and DeleteHandlerMetrics once it is
// removed or its informer has stopped, so that a removed handler's series
// goes. Set one with [SetHandlerMetricsProvider]; until then the metrics
// are no-ops, as client-go's are until a provider is set.
//
// Ours: client-go has no per-handler metrics.
type HandlerMetricsProvider = metrics.HandlerProvider

// PendingReadMetricsProvider is what a [HandlerMetricsProvider] may offer
// besides: NewPendingNotificationsRead is then called instead of
// NewPendingNotificationsMetric, with a func that reads the handler's
// backlog now (safe from any goroutine), for a gauge the provider reads
// when it is collected; the handler's notifications then set nothing.
// dropin/prometheus's provider offers it.
//
// Ours.
type PendingReadMetricsProvider = metrics.PendingReadProvider

// HandlerMetricsID is what a [HandlerMetricsProvider] labels a handler's
// series with: the informer's name, group, version and resource, and the
// handler's name (docs/07-your-controller.md, "Metrics", says which).
//
// Ours.
type HandlerMetricsID = metrics.HandlerID

// OTelHandlerMetricsProvider returns the [HandlerMetricsProvider] on
// OpenTelemetry instruments of the global MeterProvider, for
// [SetHandlerMetricsProvider]. An OpenTelemetry instrument cannot drop a
// series, so a removed handler's series stay (with no new records); the
// Prometheus provider (dropin/prometheus) deletes them.
//
// Ours.
func OTelHandlerMetricsProvider() HandlerMetricsProvider { return metrics.OTelHandlerProvider{} }

// handlerProvider is the process's HandlerMetricsProvider: set once.
var (
	handlerProvider     atomic.Pointer[HandlerMetricsProvider]
	setHandlerProviderO sync.Once
)

// SetHandlerMetricsProvider sets the provider of the per-handler metrics
// for every handler added from now on. Only the first call has an effect,
// as with cache.SetInformerMetricsProvider; dropin/prometheus calls it in
// its init, so a blank import of that package is all a program writes.
//
// Ours: mirrors cache.SetInformerMetricsProvider (informer_metrics.go).
func SetHandlerMetricsProvider(p HandlerMetricsProvider) {
	setHandlerProviderO.Do(func() {
		if p != nil {
			handlerProvider.Store(&p)
		}
	})
}

func currentHandlerProvider() HandlerMetricsProvider {
	if p := handlerProvider.Load(); p != nil {
		return *p
	}
	return metrics.NoopHandlerProvider{}
}

// globalInformerMetricsProvider is the provider client-go's informer uses
// when its options name none: cache.SetInformerMetricsProvider's, else
// client-go's no-op. client-go keeps it in an unexported variable and
// hands it only to a store made with cache.WithStoreMetrics and a nil
// provider (store.go), which keeps it in the unexported field metrics: we
// make such a store and read the field through reflect and unsafe, read
// only. If a client-go version renames the field, this returns nil, our
// informers report no client-go metrics unless their options name a
// provider, and TestGlobalInformerMetricsProviderIsFound fails. Ours.
func globalInformerMetricsProvider() cache.InformerMetricsProvider {
	st := cache.NewStore(cache.MetaNamespaceKeyFunc, cache.WithStoreMetrics(cache.InformerNameAndResource{}, nil))
	v := reflect.ValueOf(st)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	f := v.Elem().FieldByName("metrics")
	if !f.IsValid() || !f.CanAddr() {
		return nil
	}
	p, _ := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(cache.InformerMetricsProvider)
	return p
}

// isNoop reports whether m is a metric that records nothing: client-go's
// noopMetric (what its no-op provider returns) or ours. The informer then
// skips the work of feeding it (the clock reads around a process call).
func isNoop(m any) bool {
	if m == nil {
		return true
	}
	if _, ok := m.(metrics.Noop); ok {
		return true
	}
	t := reflect.TypeOf(m)
	return t.PkgPath() == "k8s.io/client-go/tools/cache" && t.Name() == "noopMetric"
}

// informerMetrics are an Informer's metrics: client-go's three, made by
// the InformerMetricsProvider client-go would use, under client-go's rules
// (see newInformerMetrics), and our two per handler, made by the
// HandlerMetricsProvider.
type informerMetrics struct {
	id       cache.InformerNameAndResource
	provider cache.InformerMetricsProvider // the options'; nil: the global one
	// rv is informer_store_resource_version, made with the informer as
	// client-go makes it with the informer's indexer (NewIndexer,
	// WithStoreMetrics); nil when it would record nothing.
	rv cache.GaugeMetric
	// lastRV is the resourceVersion rv was last set from; touched only by
	// the informer's consumer goroutine (Processed).
	lastRV string
	// latency is informer_processing_latency_seconds, made when Run builds
	// the queue, as client-go makes its FIFO's metrics (newQueueFIFO); nil
	// before, and when it would record nothing.
	latency atomic.Pointer[cache.HistogramMetric]
	store   interface{ LastStoreSyncResourceVersion() string }

	// handlerBase labels the per-handler series (Handler left empty).
	handlerBase metrics.HandlerID
	// named: the Identifier was reserved when the informer was made
	// (handlerEnabled).
	named bool
	// handlerProvider, if set (Informer.SetHandlerMetricsProvider), is
	// this informer's; nil: the process's.
	handlerProvider atomic.Pointer[HandlerMetricsProvider]
	mu              sync.Mutex
	// Guarded by mu: each listener's series, to delete when it goes.
	handlers map[string]*handlerSeries
}

// handlerSeries is one listener's pair of per-handler metrics.
type handlerSeries struct {
	id       metrics.HandlerID
	provider HandlerMetricsProvider
	pending  cache.GaugeMetric
	latency  cache.HistogramMetric
	owned    bool // false: a duplicate of a live series, reporting nothing
}

// newInformerMetrics prepares the informer's metrics. client-go's rules:
// the provider is options.InformerMetricsProvider, else the global one
// (cache.SetInformerMetricsProvider, which component-base's
// metrics/prometheus/clientgo/fifo calls in its init); the three metrics
// are made only for an Identifier that is reserved (a factory with an
// informer name; a second informer of the same name and resource is not
// reserved, and client-go logs "Duplicate informer registration"), and
// their labels are its name and resource (the factory's informer name and
// its generated informer's GVR). An informer without a reserved
// Identifier, controller-runtime's among them, reports none of the three,
// as client-go's does not.
//
// The per-handler pair is ours and is reported for every informer,
// labelled by [handlerInformerLabels].
func newInformerMetrics(options cache.SharedIndexInformerOptions, exampleObject runtime.Object, description string, store interface{ LastStoreSyncResourceVersion() string }) *informerMetrics {
	x := &informerMetrics{id: options.Identifier, provider: options.InformerMetricsProvider, store: store,
		handlerBase: handlerInformerLabels(options, exampleObject, description), handlers: map[string]*handlerSeries{},
		named: options.Identifier.Reserved()}
	if x.id.Reserved() {
		if p := x.informerProvider(); p != nil {
			if rv := p.NewStoreResourceVersionMetric(x.id); !isNoop(rv) {
				x.rv = rv
			}
		}
	}
	return x
}

// informerProvider is the provider client-go would use now.
func (x *informerMetrics) informerProvider() cache.InformerMetricsProvider {
	if x.provider != nil {
		return x.provider
	}
	return globalInformerMetricsProvider()
}

// handlerInformerLabels names an informer in its handlers' series: its
// Identifier's name when reserved (so they join its informer_* series),
// else its ObjectDescription, else a metadata-only informer's
// "<GVK> (metadata)" (controller-runtime gives every one the same Go type,
// *v1.PartialObjectMetadata, with its GVK set), else the reflector's
// description of the type (an Unstructured's GVK, or the Go type). Group,
// version and resource are the Identifier's when it names a resource,
// else the group and version of the object's kind when it has one. Ours.
func handlerInformerLabels(options cache.SharedIndexInformerOptions, exampleObject runtime.Object, description string) metrics.HandlerID {
	var out metrics.HandlerID
	if options.Identifier.Reserved() {
		out.Name = options.Identifier.Name()
	} else {
		out.Name = objectDisplayName(exampleObject, options.ObjectDescription, description)
	}
	if gvr := options.Identifier.GroupVersionResource(); !gvr.Empty() {
		out.Group, out.Version, out.Resource = gvr.Group, gvr.Version, gvr.Resource
	} else if gvk, ok := kindOf(exampleObject); ok {
		out.Group, out.Version = gvk.Group, gvk.Version
	}
	return out
}

// objectDisplayName is the name an informer is shown by where it has no
// reserved Identifier (its handlers' series, the live view's title): the
// caller's ObjectDescription, else "<GVK> (metadata)" for a
// PartialObjectMetadata with its kind set, else the reflector's
// description (an Unstructured's GVK, or the Go type). Ours.
func objectDisplayName(exampleObject runtime.Object, objectDescription, description string) string {
	if objectDescription != "" {
		return objectDescription
	}
	if m, ok := exampleObject.(*metav1.PartialObjectMetadata); ok && m != nil {
		if gvk := m.GroupVersionKind(); !gvk.Empty() {
			return gvk.String() + " (metadata)"
		}
	}
	if description != "" {
		return description
	}
	return reflector.TypeDescription(exampleObject)
}

// kindOf is the kind set on an Unstructured or PartialObjectMetadata.
func kindOf(obj runtime.Object) (schema.GroupVersionKind, bool) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		if o != nil && !o.GroupVersionKind().Empty() {
			return o.GroupVersionKind(), true
		}
	case *metav1.PartialObjectMetadata:
		if o != nil && !o.GroupVersionKind().Empty() {
			return o.GroupVersionKind(), true
		}
	}
	return schema.GroupVersionKind{}, false
}

// observer is what chapter 5 tells the informer's work to.
func (x *informerMetrics) observer() processor.Observer {
	return processor.Observer{
		Processed: x.processed,
		Enabled:   x.enabled,
		Handler:   x.handlerLatency,
		// Our per-handler series are published for every informer, named
		// or not (handlerInformerLabels): their timing does not wait for
		// client-go's metrics, which need a reserved Identifier.
		HandlerEnabled: x.handlerEnabled,
		Pending:        x.handlerPending,
		PendingRead:    x.handlerPendingRead,
		QueuedItems:    x.queuedItems,
	}
}

// queuedItems is asked when Run builds the RealFIFO: it makes the FIFO's
// two metrics from the provider client-go would use at that moment, as
// client-go's Run does (newQueueFIFO → newFIFOMetrics), and returns what
// the queue tells its length (nil when it would record nothing).
func (x *informerMetrics) queuedItems() func(int) {
	if !x.id.Reserved() {
		return nil
	}
	p := x.informerProvider()
	if p == nil {
		return nil
	}
	if l := p.NewProcessingLatencyMetric(x.id); !isNoop(l) {
		x.latency.Store(&l)
	}
	q := p.NewQueuedItemMetric(x.id)
	if isNoop(q) {
		return nil
	}
	return func(n int) { q.Set(float64(n)) }
}

// enabled: a process call is worth timing (two clock reads) and following
// with the store's resourceVersion. The Identifier is asked each time:
// once its name is released (a factory's Shutdown), client-go's metrics
// record nothing more.
func (x *informerMetrics) enabled() bool {
	return (x.latency.Load() != nil || x.rv != nil) && x.id.Reserved()
}

// handlerEnabled: a handler call is worth timing for the handler's
// latency series. An informer named by a reserved Identifier stops, as its
// client-go metrics do, once the name is released (a factory's Shutdown);
// one that never had a name times for as long as it runs.
func (x *informerMetrics) handlerEnabled() bool {
	return !x.named || x.id.Reserved()
}

// processed is told each process call's duration: client-go's
// processingLatency.Observe (RealFIFO.whileProcessing_locked). It then
// sets informer_store_resource_version from the store: every write of the
// store happens in a process call (the RealFIFO's atomic events hand the
// relist, the resync and the bookmark to the consumer too), so after each
// one the gauge holds what client-go's, set at each write, holds after the
// same call.
func (x *informerMetrics) processed(d time.Duration) {
	if l := x.latency.Load(); l != nil {
		(*l).Observe(d.Seconds())
	}
	if x.rv == nil {
		return
	}
	rv := x.store.LastStoreSyncResourceVersion()
	if rv == x.lastRV {
		return
	}
	x.lastRV = rv
	// A resourceVersion that is not a number leaves the gauge as it was,
	// as client-go's store leaves it (thread_safe_store.go).
	if v, err := metrics.ParseResourceVersion(rv); err == nil {
		x.rv.Set(float64(v))
	}
}

// series returns listener's pair, made on first ask from the handler
// provider set now. A second live handler with the same labels (two
// informers described alike, each with a handler of the same name and
// index) reports nothing, as client-go's second informer of one name and
// resource does not: its series would mix two handlers.
func (x *informerMetrics) series(listener string) *handlerSeries {
	x.mu.Lock()
	defer x.mu.Unlock()
	if s := x.handlers[listener]; s != nil {
		return s
	}
	id := x.handlerBase
	id.Handler = listener
	s := &handlerSeries{id: id, provider: currentHandlerProvider()}
	if p := x.handlerProvider.Load(); p != nil {
		s.provider = *p
	}
	if _, noop := s.provider.(metrics.NoopHandlerProvider); !noop && claimHandlerSeries(id) {
		s.owned = true
		if _, reads := s.provider.(metrics.PendingReadProvider); !reads {
			s.pending = s.provider.NewPendingNotificationsMetric(id)
		}
		s.latency = s.provider.NewHandlerProcessingLatencyMetric(id)
	} else if !noop {
		klog.V(2).InfoS("Duplicate handler metrics - the second handler's are not published", "name", id.Name,
			"group", id.Group, "version", id.Version, "resource", id.Resource, "handler", id.Handler)
	}
	x.handlers[listener] = s
	return s
}

func (x *informerMetrics) handlerLatency(listener string) func(time.Duration) {
	s := x.series(listener)
	if !s.owned || isNoop(s.latency) {
		return nil
	}
	h := s.latency
	return func(d time.Duration) { h.Observe(d.Seconds()) }
}

// handlerPendingRead gives the backlog's reader to a provider that reads
// the gauge itself (metrics.PendingReadProvider): then the listener tells
// handlerPending nothing.
func (x *informerMetrics) handlerPendingRead(listener string, backlog func() int) bool {
	s := x.series(listener)
	r, reads := s.provider.(metrics.PendingReadProvider)
	if !s.owned || !reads {
		return false
	}
	r.NewPendingNotificationsRead(s.id, backlog)
	return true
}

func (x *informerMetrics) handlerPending(listener string) func(int) {
	s := x.series(listener)
	if !s.owned || s.pending == nil || isNoop(s.pending) {
		return nil
	}
	g := s.pending
	g.Set(0) // the series shows from the handler's start, as a gauge vector's does
	return func(n int) { g.Set(float64(n)) }
}

// removeHandler drops listener's series: its handler was removed.
func (x *informerMetrics) removeHandler(listener string) {
	x.mu.Lock()
	s := x.handlers[listener]
	delete(x.handlers, listener)
	x.mu.Unlock()
	if s != nil {
		s.release()
	}
}

// removeAll drops every handler's series: the informer has stopped, or
// was dropped without running.
func (x *informerMetrics) removeAll() {
	x.mu.Lock()
	all := x.handlers
	x.handlers = map[string]*handlerSeries{}
	x.mu.Unlock()
	for _, s := range all {
		s.release()
	}
}

func (s *handlerSeries) release() {
	if s.owned {
		s.provider.DeleteHandlerMetrics(s.id)
		releaseHandlerSeries(s.id)
	}
}

// liveHandlerSeries are the handler series some live handler owns,
// process-wide.
var liveHandlerSeries = struct {
	sync.Mutex
	ids map[metrics.HandlerID]struct{}
}{ids: map[metrics.HandlerID]struct{}{}}

func claimHandlerSeries(id metrics.HandlerID) bool {
	liveHandlerSeries.Lock()
	defer liveHandlerSeries.Unlock()
	if _, dup := liveHandlerSeries.ids[id]; dup {
		return false
	}
	liveHandlerSeries.ids[id] = struct{}{}
	return true
}

func releaseHandlerSeries(id metrics.HandlerID) {
	liveHandlerSeries.Lock()
	defer liveHandlerSeries.Unlock()
	delete(liveHandlerSeries.ids, id)
}

// SetHandlerMetricsProvider sets the provider of this informer's
// per-handler metrics, for the handlers added from now on; nil: the
// process's ([SetHandlerMetricsProvider]). It is to the per-handler metrics
// what SharedIndexInformerOptions.InformerMetricsProvider is to client-go's
// three.
//
// Ours.
func (i *Informer) SetHandlerMetricsProvider(p HandlerMetricsProvider) error {
	if p == nil {
		i.metrics.handlerProvider.Store(nil)
	} else {
		i.metrics.handlerProvider.Store(&p)
	}
	return nil
}
