package dropin_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/dropin"
)

// handlerRecorder is a HandlerMetricsProvider that keeps which series are
// live: made and not yet deleted.
type handlerRecorder struct {
	mu      sync.Mutex
	live    map[dropin.HandlerMetricsID]int // metrics made per id
	made    int
	deleted int
	calls   map[dropin.HandlerMetricsID]int
}

func newHandlerRecorder() *handlerRecorder {
	return &handlerRecorder{live: map[dropin.HandlerMetricsID]int{}, calls: map[dropin.HandlerMetricsID]int{}}
}

type hrGauge struct{}

func (hrGauge) Set(float64) {}

type hrHist struct {
	r  *handlerRecorder
	id dropin.HandlerMetricsID
}

func (h hrHist) Observe(float64) { h.r.mu.Lock(); h.r.calls[h.id]++; h.r.mu.Unlock() }

func (r *handlerRecorder) NewPendingNotificationsMetric(id dropin.HandlerMetricsID) cache.GaugeMetric {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live[id]++
	r.made++
	return hrGauge{}
}

func (r *handlerRecorder) NewHandlerProcessingLatencyMetric(id dropin.HandlerMetricsID) cache.HistogramMetric {
	return hrHist{r, id}
}

func (r *handlerRecorder) DeleteHandlerMetrics(id dropin.HandlerMetricsID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live[id]--
	if r.live[id] == 0 {
		delete(r.live, id)
	}
	r.deleted++
}

func (r *handlerRecorder) liveIDs() []dropin.HandlerMetricsID {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []dropin.HandlerMetricsID
	for id := range r.live {
		out = append(out, id)
	}
	return out
}

// TestInformerMetricsFollowClientGosRules: the options' provider is asked
// for the informer's three metrics only with a reserved Identifier, with
// that Identifier, as client-go asks (informer_metrics.go, newFIFOMetrics
// and newStoreMetrics: not at all without one); a second informer of the
// same name and resource is not reserved (InformerName.WithResource), so
// its provider is never asked, as client-go's would not be.
func TestInformerMetricsFollowClientGosRules(t *testing.T) {
	srv := startServer(t)
	name, err := cache.NewInformerName(fmt.Sprintf("rules-%d", metricsRuns.Add(1)))
	require.NoError(t, err)
	defer name.Release()
	first, second, none := &informerRecorder{}, &informerRecorder{}, &informerRecorder{}
	build := func(rec *informerRecorder, id cache.InformerNameAndResource) cache.SharedIndexInformer {
		inf := dropin.NewSharedIndexInformerWithOptions(inProcessLW(srv), &corev1.Pod{},
			cache.SharedIndexInformerOptions{Identifier: id, InformerMetricsProvider: rec})
		_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{})
		require.NoError(t, err)
		return inf
	}
	infs := []cache.SharedIndexInformer{
		build(first, name.WithResource(podsGVR)),
		build(second, name.WithResource(podsGVR)), // a duplicate: not reserved
		build(none, cache.InformerNameAndResource{}),
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, inf := range infs {
		wg.Go(func() { inf.RunWithContext(ctx) })
	}
	defer func() { cancel(); wg.Wait() }()
	require.True(t, cache.WaitForCacheSync(ctx.Done(), infs[0].HasSynced, infs[1].HasSynced, infs[2].HasSynced))
	createPods(t, srv, "rules", 1)
	require.Eventually(t, func() bool {
		first.mu.Lock()
		defer first.mu.Unlock()
		return first.rvSet && len(first.latency) > 0
	}, 10*time.Second, 10*time.Millisecond)

	first.mu.Lock()
	require.Equal(t, 3, first.calls, "the three metrics, each asked for once")
	for _, id := range first.ids {
		require.Equal(t, name.Name(), id.Name())
		require.Equal(t, podsGVR, id.GroupVersionResource())
	}
	first.mu.Unlock()
	for side, rec := range map[string]*informerRecorder{"duplicate": second, "no Identifier": none} {
		rec.mu.Lock()
		require.Zero(t, rec.calls, "%s: client-go would not ask its provider", side)
		rec.mu.Unlock()
	}
}

// globalRecorder is the process's cache.SetInformerMetricsProvider: set
// once, for the tests that need the global provider.
var (
	globalOnce     sync.Once
	globalRecorder = &informerRecorder{}
)

func setGlobalInformerProvider() *informerRecorder {
	globalOnce.Do(func() { cache.SetInformerMetricsProvider(globalRecorder) })
	return globalRecorder
}

// TestFactoryNamesItsInformers: a factory made with FactoryScope's
// InformerName (informers.WithInformerName) builds ours through
// NewInformerFunc with the Identifier client-go's generated informer would
// have, the factory's name and the generated informer's resource, and the
// informer reports to the global provider (cache.SetInformerMetricsProvider)
// when its options name none, as client-go's does.
func TestFactoryNamesItsInformers(t *testing.T) {
	rec := setGlobalInformerProvider()
	name, err := cache.NewInformerName(fmt.Sprintf("factory-%d", metricsRuns.Add(1)))
	require.NoError(t, err)
	scope := dropin.FactoryScope{InformerName: name}
	client := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}})
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, scope.Options()...)
	require.Same(t, name, factory.InformerName(), "Options carries the name to the factory")
	factory.InformerFor(&corev1.ConfigMap{}, dropin.NewInformerFunc(scope, &corev1.ConfigMap{},
		func(c kubernetes.Interface, ns string) dropin.ListWatchClient[*corev1.ConfigMapList] {
			return c.CoreV1().ConfigMaps(ns)
		}))
	inf := factory.Core().V1().ConfigMaps().Informer()
	_, ok := dropin.InformerOf(inf)
	require.True(t, ok)
	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx.Done())
	defer func() { cancel(); factory.Shutdown() }()
	factory.WaitForCacheSync(ctx.Done())

	want := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	found := 0
	for _, id := range rec.ids {
		if id.Name() == name.Name() {
			require.Equal(t, want, id.GroupVersionResource())
			found++
		}
	}
	require.Equal(t, 3, found, "the global provider was asked for the three metrics of the factory's informer")
}

// TestHandlerSeriesStayBounded: a handler's series go when it is removed,
// and every handler's when the informer stops, so adding and removing
// handlers 200 times leaves the one handler that stays, then none.
func TestHandlerSeriesStayBounded(t *testing.T) {
	srv := startServer(t)
	rec := newHandlerRecorder()
	inf := dropin.NewSharedIndexInformer(inProcessLW(srv), &corev1.Pod{}, 0, cache.Indexers{})
	require.NoError(t, inf.(*dropin.Informer).SetHandlerMetricsProvider(rec))
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.RunWithContext(ctx); close(done) }()
	require.True(t, cache.WaitForCacheSync(ctx.Done(), inf.HasSynced))
	for range 200 {
		reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{})
		require.NoError(t, err)
		require.NoError(t, inf.RemoveEventHandler(reg))
	}
	require.Len(t, rec.liveIDs(), 1, "only the handler that stays")
	require.Equal(t, 201, rec.made)
	cancel()
	<-done
	require.Empty(t, rec.liveIDs(), "the stopped informer's handlers' series are gone")
}

// TestMetadataInformersAreToldApart: two metadata-only informers (what a
// controller-runtime manager makes for a metadata watch: the same Go
// type, *v1.PartialObjectMetadata, with the kind set) label their
// handlers' series by their kind, so neither collapses into the other.
func TestMetadataInformersAreToldApart(t *testing.T) {
	srv := startServer(t)
	rec := newHandlerRecorder()
	var ids []dropin.HandlerMetricsID
	var infs []cache.SharedIndexInformer
	for _, kind := range []string{"ConfigMap", "Secret"} {
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
		inf := dropin.NewSharedIndexInformer(inProcessLW(srv), obj, 0, cache.Indexers{})
		require.NoError(t, inf.(*dropin.Informer).SetHandlerMetricsProvider(rec))
		_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{})
		require.NoError(t, err)
		infs = append(infs, inf)
	}
	ids = rec.liveIDs()
	require.Len(t, ids, 2, "two series, not one")
	names := map[string]bool{}
	for _, id := range ids {
		names[id.Name] = true
		require.Equal(t, "v1", id.Version)
	}
	want := map[string]bool{"/v1, Kind=ConfigMap (metadata)": true, "/v1, Kind=Secret (metadata)": true}
	require.Equal(t, want, names)

	// The live view titles their boxes by kind too.
	hs := httptest.NewServer(dropin.LiveViewHandler())
	t.Cleanup(hs.Close)
	types := map[string]bool{}
	for _, i := range liveState(t, hs.URL+"/").Informers {
		if want[i.Type] {
			types[i.Type] = true
		}
	}
	require.Equal(t, want, types, "one box per kind")
	runtime.KeepAlive(infs)
}

// readingProvider is a handlerRecorder that also reads the pending gauge
// itself (metrics.PendingReadProvider), as dropin/prometheus's does.
type readingProvider struct {
	*handlerRecorder
	mu    sync.Mutex
	reads map[dropin.HandlerMetricsID]func() int
	sets  atomic.Int64 // Sets on a pushed gauge: none expected
}

type countingGauge struct{ n *atomic.Int64 }

func (g countingGauge) Set(float64) { g.n.Add(1) }

func (p *readingProvider) NewPendingNotificationsMetric(id dropin.HandlerMetricsID) cache.GaugeMetric {
	p.handlerRecorder.NewPendingNotificationsMetric(id)
	return countingGauge{&p.sets}
}

func (p *readingProvider) NewPendingNotificationsRead(id dropin.HandlerMetricsID, backlog func() int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reads[id] = backlog
}

func (p *readingProvider) backlog(t *testing.T) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	require.Len(t, p.reads, 1)
	for _, read := range p.reads {
		return read()
	}
	return -1
}

// TestAReadPendingGaugeCostsNotificationsNothing: a handler provider that
// reads informer_handler_pending_notifications itself (PendingReadProvider)
// gets a reader of the handler's backlog and no gauge to set, so the
// handler's notifications set nothing; the reader says what waits, while a
// handler is stuck and after it is freed. A provider without it gets a
// gauge set at each change, as before (the same run's second informer).
func TestAReadPendingGaugeCostsNotificationsNothing(t *testing.T) {
	srv := startServer(t)
	createPods(t, srv, "backlog", 10)
	run := func(provider dropin.HandlerMetricsProvider, gate chan struct{}) (stop func()) {
		inf := dropin.NewSharedIndexInformer(inProcessLW(srv), &corev1.Pod{}, 0, cache.Indexers{})
		require.NoError(t, inf.(*dropin.Informer).SetHandlerMetricsProvider(provider))
		_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) { <-gate }})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { inf.RunWithContext(ctx); close(done) }()
		return func() { cancel(); <-done }
	}

	reading := &readingProvider{handlerRecorder: newHandlerRecorder(), reads: map[dropin.HandlerMetricsID]func() int{}}
	gate := make(chan struct{})
	stop := run(reading, gate)
	// Ten adds: one in the handler, one offered on nextCh, eight waiting.
	require.Eventually(t, func() bool { return reading.backlog(t) == 8 }, 10*time.Second, time.Millisecond,
		"the reader says what waits for the stuck handler")
	close(gate)
	require.Eventually(t, func() bool { return reading.backlog(t) == 0 }, 10*time.Second, time.Millisecond)
	stop()
	require.Zero(t, reading.made, "no pushed gauge is made for a provider that reads it")
	require.Zero(t, reading.sets.Load(), "no notification sets a gauge")

	pushed := &readingProvider{handlerRecorder: newHandlerRecorder()}
	plain := &pushOnly{pushed}
	gate = make(chan struct{})
	close(gate)
	stop = run(plain, gate)
	require.Eventually(t, func() bool { return pushed.sets.Load() >= 10 }, 10*time.Second, time.Millisecond,
		"a provider that does not read it is told each change")
	stop()
}

// pushOnly hides readingProvider's NewPendingNotificationsRead.
type pushOnly struct{ p *readingProvider }

func (p *pushOnly) NewPendingNotificationsMetric(id dropin.HandlerMetricsID) cache.GaugeMetric {
	return p.p.NewPendingNotificationsMetric(id)
}
func (p *pushOnly) NewHandlerProcessingLatencyMetric(id dropin.HandlerMetricsID) cache.HistogramMetric {
	return p.p.NewHandlerProcessingLatencyMetric(id)
}
func (p *pushOnly) DeleteHandlerMetrics(id dropin.HandlerMetricsID) { p.p.DeleteHandlerMetrics(id) }
