package dropin_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// gatedEnqueuer is a handler that cannot start before its gate opens: a
// slow handler, made exact, behind which the changes of a burst wait.
type gatedEnqueuer struct {
	gate <-chan struct{}
	configMapEnqueuer
}

func (h gatedEnqueuer) OnAdd(obj any, initial bool) {
	<-h.gate
	h.configMapEnqueuer.OnAdd(obj, initial)
}
func (h gatedEnqueuer) OnUpdate(old, obj any) { <-h.gate; h.configMapEnqueuer.OnUpdate(old, obj) }

// After a slow handler's backlog the page still lists what a user came
// for: the newest changes, whole, each with the reconcile it caused. A
// burst of 150 changes waits behind a handler that cannot start, the span
// store keeps 30 traces, so the roots of the first 120 are evicted before
// their handler calls, adds and reconciles end. Those late spans must not
// come back as traces of their own: when each of them counted as the
// newest trace, they pushed out the 30 whole ones, and the page listed a
// few reconciles among fragments that have no watch event.
func TestSpanStoreKeepsWholeTracesAfterASlowHandlerBacklog(t *testing.T) {
	const burst, kept = 150, 30
	srv := startServer(t)
	store := livepage.NewSpanStore(kept)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(store))
	inf := dropin.NewSharedInformer(srv.ListerWatcher(apiserver.ConfigMaps, metav1.NamespaceAll), &corev1.ConfigMap{}, 0).(*dropin.Informer)
	require.NoError(t, inf.SetTracerProvider(tp))
	q := dropin.NewTracedQueue("backlog", workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()))
	q.(*dropin.TracedQueue[string]).SetTracerProvider(tp)
	gate := make(chan struct{})
	_, err := inf.AddEventHandler(gatedEnqueuer{gate, configMapEnqueuer{q}})
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var done atomic.Int64
	wg.Go(func() { inf.RunWithContext(ctx) })
	wg.Go(func() {
		for {
			k, shutdown := q.Get()
			if shutdown {
				return
			}
			q.Forget(k)
			q.Done(k)
			done.Add(1)
		}
	})
	t.Cleanup(func() { cancel(); q.ShutDown(); wg.Wait() })
	require.True(t, cache.WaitForCacheSync(ctx.Done(), inf.HasSynced))

	for i := range burst {
		_, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("cm-%03d", i)}})
		require.NoError(t, err)
	}
	// Every change is in the cache (HandleDeltas ran, so every root has
	// ended) while every handler call still waits: the backlog.
	testutil.Eventually(t, "the burst cached", func() bool { return len(inf.GetStore().ListKeys()) == burst })
	_, evicted := store.Counts()
	require.GreaterOrEqual(t, evicted, burst-kept, "the roots of the burst's first changes were evicted before their handler calls")
	close(gate)
	testutil.Eventually(t, "every change reconciled", func() bool { return done.Load() == burst })

	events := store.Events(2 * kept)
	reconciled := map[string]bool{}
	for _, r := range store.Reconciles(2 * kept) {
		reconciled[r.Key] = true
	}
	assert.GreaterOrEqual(t, len(events), kept-2, "the store keeps whole traces of the newest changes (all but the reflector cycle's), not fragments of evicted ones: %d events listed", len(events))
	for _, e := range events {
		assert.Equal(t, 1, e.HandlerCalls, "%s: its handler call is in its trace", e.Key)
		assert.True(t, reconciled[e.Key], "%s: its reconcile is listed", e.Key)
	}
	if n := len(events); n > 0 {
		assert.Equal(t, fmt.Sprintf("ns/cm-%03d", burst-1), events[0].Key, "the newest change first")
	}
	assert.Positive(t, store.LateSpansDropped(), "the late spans of the evicted changes were dropped")
}
