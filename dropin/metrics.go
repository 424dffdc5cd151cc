package dropin

import (
	"runtime"
	"sync/atomic"
	"weak"

	"go.opentelemetry.io/otel/metric"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/internal/metrics"
)

// WorkqueueMetricsProvider returns client-go's workqueue.MetricsProvider
// on OpenTelemetry instruments of the global MeterProvider: the seven
// workqueue_* metrics with component-base's names, meanings, buckets and
// attribute name.
//
// A traced queue (NewTracedRateLimitingQueueWithConfig, NewTracedQueue,
// NewTracedDelayingQueue, NewTracedPlainQueue, dropin/crqueue's
// NewTracedPriorityQueue) needs none: it reports the same metrics itself,
// under its name. This provider is for a client-go queue that is not
// traced, or for the client-go queue under a traced one when its numbers
// should come from the queue's own bookkeeping:
//
//	queue := dropin.NewTracedRateLimitingQueueWithConfig(limiter,
//		workqueue.TypedRateLimitingQueueConfig[string]{Name: "pods", MetricsProvider: dropin.WorkqueueMetricsProvider()})
//
// A queue given it under a name takes that name's series: a traced queue
// of the same name made afterwards reports nothing of its own, so nothing
// is counted twice. It can also go to workqueue.SetProvider once, before
// any queue is made, for every named queue; controller-runtime's priority
// queue takes it as priorityqueue.Opts.MetricProvider.
//
// Ours: mirrors k8s.io/component-base/metrics/prometheus/workqueue, on
// OpenTelemetry instead of Prometheus.
func WorkqueueMetricsProvider() workqueue.MetricsProvider { return metrics.WorkqueueProvider{} }

// informerMetrics are an Informer's metrics: client-go's three informer
// metrics and our two per handler (internal/metrics). Unlike client-go,
// which records them only for an informer whose Identifier is reserved
// (a factory with an informer name), every informer of this package
// records them; name is the Identifier's name, else the informer's type.
type informerMetrics struct {
	m *metrics.Informer
	// self is the informer, weakly: the meter's callback must not keep an
	// informer nobody holds alive (a cleanup unregisters it). Set once the
	// informer is built; a collection may read it from another goroutine.
	self atomic.Pointer[weak.Pointer[Informer]]
}

func newInformerMetrics(options cache.SharedIndexInformerOptions, description string) *informerMetrics {
	id := metrics.InformerID{Name: options.Identifier.Name()}
	if id.Name == "" {
		id.Name = description
	}
	gvr := options.Identifier.GroupVersionResource()
	id.Group, id.Version, id.Resource = gvr.Group, gvr.Version, gvr.Resource
	x := &informerMetrics{}
	x.m = metrics.NewInformer(id, x.read)
	return x
}

// observer is what chapter 5 tells the durations of its work to.
func (x *informerMetrics) observer() processor.Observer {
	return processor.Observer{
		Processed: x.m.Processed,
		Enabled:   metrics.Enabled,
		Handler:   x.m.Handler,
	}
}

// attach points the gauges at i, and unregisters them when i is collected.
func (x *informerMetrics) attach(i *Informer) {
	w := weak.Make(i)
	x.self.Store(&w)
	if reg := x.m.Registration(); reg != nil {
		runtime.AddCleanup(i, func(r metric.Registration) { _ = r.Unregister() }, reg)
	}
}

// read is the gauges' view of the informer: nothing before Run has built
// its queue, nor after it stopped.
func (x *informerMetrics) read() (metrics.InformerState, bool) {
	w := x.self.Load()
	if w == nil {
		return metrics.InformerState{}, false
	}
	i := w.Value()
	if i == nil || i.inner.IsStopped() {
		return metrics.InformerState{}, false
	}
	st, err := processor.ReadStats(i.inner)
	if err != nil || !st.Started {
		return metrics.InformerState{}, false
	}
	out := metrics.InformerState{
		QueuedItems:          st.QueueLen,
		StoreResourceVersion: i.inner.GetIndexer().LastStoreSyncResourceVersion(),
		Handlers:             make([]metrics.HandlerState, len(st.Listeners)),
	}
	for n, l := range st.Listeners {
		out.Handlers[n] = metrics.HandlerState{Name: l.Name, Pending: l.AddCh + l.Pending}
	}
	return out, true
}
