package metrics

import (
	"context"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// InformerID is what an informer's metrics are labelled with:
// component-base's name, group, version and resource (from client-go's
// InformerNameAndResource, tools/cache/identity.go). Ours.
type InformerID struct {
	Name, Group, Version, Resource string
}

// InformerState is what the informer's gauges read when the metrics are
// collected. Ours.
type InformerState struct {
	// QueuedItems is the queue's length: entries of the RealFIFO, keys of
	// the DeltaFIFO (client-go's len(f.items) of either).
	QueuedItems int
	// StoreResourceVersion is the store's last written resourceVersion
	// (threadSafeMap's rv upstream).
	StoreResourceVersion string
	// Handlers are the informer's listeners now.
	Handlers []HandlerState
}

// HandlerState is one listener's part of [InformerState]. Ours.
type HandlerState struct {
	// Name is the listener's informer.listener (handler type + index).
	Name string
	// Pending is how many notifications wait for the handler: in addCh
	// and in the listener's buffer.
	Pending int
}

// Informer is one informer's instruments.
//
// Differs from client-go: client-go sets informer_queued_items and
// informer_store_resource_version at every change of the queue and of the
// store (the_real_fifo.go, thread_safe_store.go); ours are observable
// gauges read at collection, which a scrape cannot tell apart (both are
// the value now). An informer not yet running or stopped reports neither,
// where client-go's keep their last value. A resourceVersion that does not
// parse as a number is left out, as client-go leaves the gauge unchanged.
type Informer struct {
	processing, handler metric.Float64Histogram
	idSet               attribute.Set
	idOpt               metric.MeasurementOption
	// recordOpts is idOpt as Record's variadic options, made once (see
	// workqueue.go: a fresh variadic argument allocates per call).
	recordOpts []metric.RecordOption
	reg        metric.Registration
}

// NewInformer makes id's instruments on the global provider. read is
// asked at each collection; false: report nothing (not running). Ours:
// client-go makes its through InformerMetricsProvider (newFIFOMetrics,
// newStoreMetrics in tools/cache/informer_metrics.go).
func NewInformer(id InformerID, read func() (InformerState, bool)) *Informer {
	m := Meter()
	set := attribute.NewSet(KeyName.String(id.Name), KeyGroup.String(id.Group),
		KeyVersion.String(id.Version), KeyResource.String(id.Resource))
	in := &Informer{
		processing: orNoop[metric.Float64Histogram](must(m.Float64Histogram(InformerProcessingLatency,
			metric.WithDescription("Time taken to process events after popping from the queue."),
			metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(InformerBuckets...))), noop.Float64Histogram{}),
		handler: orNoop[metric.Float64Histogram](must(m.Float64Histogram(HandlerProcessingLatency,
			metric.WithDescription("Time taken by one call of an event handler (OnAdd, OnUpdate or OnDelete)."),
			metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(InformerBuckets...))), noop.Float64Histogram{}),
		idSet: set,
		idOpt: metric.WithAttributeSet(set),
	}
	in.recordOpts = []metric.RecordOption{in.idOpt}
	queued := orNoop[metric.Int64ObservableGauge](must(m.Int64ObservableGauge(InformerQueuedItems,
		metric.WithDescription("Number of items currently queued in the FIFO."))), noop.Int64ObservableGauge{})
	rv := orNoop[metric.Int64ObservableGauge](must(m.Int64ObservableGauge(InformerStoreResourceVersion,
		metric.WithDescription("The 15 least significant digits of the resource version of the store."))), noop.Int64ObservableGauge{})
	pending := orNoop[metric.Int64ObservableGauge](must(m.Int64ObservableGauge(HandlerPendingNotifications,
		metric.WithDescription("Number of notifications waiting for an event handler."))), noop.Int64ObservableGauge{})
	idOpt := in.idOpt
	name := KeyName.String(id.Name)
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st, ok := read()
		if !ok {
			return nil
		}
		o.ObserveInt64(queued, int64(st.QueuedItems), idOpt)
		if v, err := ParseResourceVersion(st.StoreResourceVersion); err == nil {
			o.ObserveInt64(rv, v, idOpt)
		}
		for _, h := range st.Handlers {
			o.ObserveInt64(pending, int64(h.Pending), metric.WithAttributes(name, KeyHandler.String(h.Name)))
		}
		return nil
	}, queued, rv, pending)
	in.reg = must(reg, err)
	return in
}

// Processed records one process call's duration: client-go's
// processingLatency.Observe in RealFIFO.whileProcessing_locked.
func (in *Informer) Processed(d time.Duration) {
	in.processing.Record(context.Background(), d.Seconds(), in.recordOpts...)
}

// Handler returns what records the duration of each call of listener's
// handler. Ours: client-go times no handler call.
func (in *Informer) Handler(listener string) func(time.Duration) {
	v, _ := in.idSet.Value(KeyName)
	opts := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(KeyName.String(v.AsString()), KeyHandler.String(listener)))}
	h := in.handler
	return func(d time.Duration) {
		// Off (no provider set), not even the no-op record: one atomic
		// load per handler call.
		if !Enabled() {
			return
		}
		h.Record(context.Background(), d.Seconds(), opts...)
	}
}

// Registration is the gauges' callback on the meter, for a cleanup that
// unregisters it once the informer is gone (and must not hold the
// Informer).
func (in *Informer) Registration() metric.Registration { return in.reg }

// ParseResourceVersion is the number informer_store_resource_version
// reports for rv: its last 15 digits (so a float64 holds it exactly), 0 for
// "". Mirrors parseRVForMetricsWithTruncation (thread_safe_store.go).
func ParseResourceVersion(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	if len(rv) > 15 {
		rv = rv[len(rv)-15:]
	}
	return strconv.ParseInt(rv, 10, 64)
}
