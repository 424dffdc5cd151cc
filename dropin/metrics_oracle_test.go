package dropin_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

// informerRecorder is client-go's InformerMetricsProvider keeping what the
// informer told it; calls counts the metrics it was asked for.
type informerRecorder struct {
	mu               sync.Mutex
	queued, rv       float64
	queuedSet, rvSet bool
	latency          []float64
	calls            int
	ids              []cache.InformerNameAndResource
}

type recSetter struct {
	r   *informerRecorder
	v   *float64
	set *bool
}

func (s recSetter) Set(v float64) { s.r.mu.Lock(); *s.v, *s.set = v, true; s.r.mu.Unlock() }

type recObserver struct{ r *informerRecorder }

func (o recObserver) Observe(v float64) {
	o.r.mu.Lock()
	o.r.latency = append(o.r.latency, v)
	o.r.mu.Unlock()
}

func (r *informerRecorder) asked(id cache.InformerNameAndResource) {
	r.mu.Lock()
	r.calls++
	r.ids = append(r.ids, id)
	r.mu.Unlock()
}

func (r *informerRecorder) NewQueuedItemMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	r.asked(id)
	return recSetter{r, &r.queued, &r.queuedSet}
}
func (r *informerRecorder) NewProcessingLatencyMetric(id cache.InformerNameAndResource) cache.HistogramMetric {
	r.asked(id)
	return recObserver{r}
}
func (r *informerRecorder) NewStoreResourceVersionMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	r.asked(id)
	return recSetter{r, &r.rv, &r.rvSet}
}

// TestInformerMetricsMatchClientGo runs client-go's informer and ours,
// each with a recording InformerMetricsProvider in its options and a
// reserved Identifier, on one script of writes in a synctest bubble, and
// requires ours to tell its provider what client-go told its own: the same
// queue length and the same store resourceVersion after every step, and
// as many process calls (informer_processing_latency_seconds' count) after
// each single write.
func TestInformerMetricsMatchClientGo(t *testing.T) {
	srv := startServer(t)
	createPods(t, srv, "initial", 3)
	synctest.Test(t, func(t *testing.T) {
		run := metricsRuns.Add(1)
		identifier := func(side string) cache.InformerNameAndResource {
			n, err := cache.NewInformerName(fmt.Sprintf("oracle-%s-%d", side, run))
			require.NoError(t, err)
			return n.WithResource(podsGVR)
		}
		rec, oursRec := &informerRecorder{}, &informerRecorder{}
		theirs := cache.NewSharedIndexInformerWithOptions(inProcessLW(srv), &corev1.Pod{},
			cache.SharedIndexInformerOptions{Identifier: identifier("client-go"), InformerMetricsProvider: rec})
		ours := dropin.NewSharedIndexInformerWithOptions(inProcessLW(srv), &corev1.Pod{},
			cache.SharedIndexInformerOptions{Identifier: identifier("dropin"), InformerMetricsProvider: oursRec})
		for _, inf := range []cache.SharedIndexInformer{theirs, ours} {
			_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{})
			require.NoError(t, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { theirs.RunWithContext(ctx) })
		wg.Go(func() { ours.RunWithContext(ctx) })
		defer func() { cancel(); wg.Wait() }()

		// calls: whether the process calls must match too. They do after each
		// single write; a burst written without a pause is popped in as
		// many batches as the informer's goroutine happens to find, which
		// the scheduler decides, on either side.
		check := func(step string, calls bool) {
			t.Helper()
			synctest.Wait()
			rec.mu.Lock()
			defer rec.mu.Unlock()
			oursRec.mu.Lock()
			defer oursRec.mu.Unlock()
			require.True(t, rec.queuedSet && rec.rvSet, step)
			require.True(t, oursRec.queuedSet && oursRec.rvSet, "%s: ours set both gauges", step)
			require.Equal(t, rec.queued, oursRec.queued, "%s: queued items", step)
			require.Equal(t, rec.rv, oursRec.rv, "%s: store resourceVersion", step)
			if calls {
				require.Len(t, oursRec.latency, len(rec.latency), "%s: process calls", step)
			}
		}
		check("initial state", true)
		createPods(t, srv, "later", 1)
		check("a create", true)
		createPods(t, srv, "more", 1)
		check("another create", true)
		obj, err := srv.Get(apiserver.Pods, "default", "later-0")
		require.NoError(t, err)
		p := obj.(*corev1.Pod).DeepCopy()
		p.Labels = map[string]string{"app": "x"}
		_, err = srv.Update(p)
		require.NoError(t, err)
		check("an update", true)
		require.NoError(t, srv.Delete(apiserver.Pods, "default", "initial-1"))
		check("a delete", true)
		// A burst written while both informers wait on their watches.
		for i := range 5 {
			_, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("burst-%d", i)}})
			require.NoError(t, err)
		}
		check("a burst of creates", false)
		time.Sleep(time.Minute)
		check("a minute later", false)
	})
}
