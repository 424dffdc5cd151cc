package controller

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// The controller's own tests, in the sample-controller style: a fake
// clientset, a factory, the controller, and the world after it ran. They
// run with our informer injected, as a user's would after the one-line
// change.

func watchedCM(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name),
		Labels: map[string]string{WatchLabel: "true"}}, Data: data}
}

type fixture struct {
	t       *testing.T
	client  *fake.Clientset
	factory informers.SharedInformerFactory
	c       *Controller

	// stop ends the controller and the factory and waits for both: after
	// it, no reconcile or handler call is still running.
	stop func()

	mu        sync.Mutex
	reconcile map[string]int
}

func newFixture(t *testing.T, objects ...*corev1.ConfigMap) *fixture {
	f := &fixture{t: t, client: fake.NewClientset(), reconcile: map[string]int{}}
	for _, o := range objects {
		_, err := f.client.CoreV1().ConfigMaps(o.Namespace).Create(context.Background(), o, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	f.factory = informers.NewSharedInformerFactory(f.client, 0)
	UseDropinInformer(f.factory, dropin.FactoryScope{})
	c, err := New(f.client, f.factory.Core().V1().ConfigMaps())
	require.NoError(t, err)
	c.Reconciled = func(key string, err error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		assert.NoError(t, err, key) // not require: this runs on a worker goroutine
		f.reconcile[key]++
	}
	f.c = c
	ctx, cancel := context.WithCancel(context.Background())
	f.factory.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, 2) }()
	f.stop = sync.OnceFunc(func() {
		cancel()
		require.NoError(t, <-done)
		f.factory.Shutdown()
	})
	t.Cleanup(f.stop)
	return f
}

func (f *fixture) reconciles(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reconcile[key]
}

func (f *fixture) status(name string) (*corev1.ConfigMap, error) {
	return f.client.CoreV1().ConfigMaps("default").Get(context.Background(), name+StatusSuffix, metav1.GetOptions{})
}

// eventually waits for cond, failing after a generous while: the
// controller runs on real goroutines and the fake clientset's watch.
func (f *fixture) eventually(cond func() bool, what string) {
	f.t.Helper()
	require.Eventually(f.t, cond, 20*time.Second, 5*time.Millisecond, what)
}

// TestFactoryHandsOutOurs: after UseDropinInformer, the factory's
// ConfigMap informer (which 1.37's typed accessor wraps) is ours.
func TestFactoryHandsOutOurs(t *testing.T) {
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	UseDropinInformer(factory, dropin.FactoryScope{})
	first, ok := dropin.InformerOf(factory.Core().V1().ConfigMaps().Informer())
	require.True(t, ok, "the factory's informer is ours")
	second, _ := dropin.InformerOf(factory.Core().V1().ConfigMaps().Informer())
	require.Same(t, first, second, "one informer, shared")
}

// TestCreateMakesStatus: a watched ConfigMap present at start gets its
// status; an unwatched one does not.
func TestCreateMakesStatus(t *testing.T) {
	unwatched := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other"}}
	f := newFixture(t, watchedCM("app", map[string]string{"a": "1", "b": "2"}), unwatched)
	f.eventually(func() bool { _, err := f.status("app"); return err == nil }, "the status of app")
	st, _ := f.status("app")
	require.Equal(t, "2", st.Data["keys"])
	require.Equal(t, "app", st.OwnerReferences[0].Name)
	_, err := f.status("other")
	require.True(t, apierrors.IsNotFound(err), "an unwatched ConfigMap gets no status: %v", err)
}

// TestUpdateAndDeleteReachTheReconcile: a change is reflected, a delete
// removes the status.
func TestUpdateAndDeleteReachTheReconcile(t *testing.T) {
	f := newFixture(t, watchedCM("app", map[string]string{"a": "1"}))
	f.eventually(func() bool { _, err := f.status("app"); return err == nil }, "the status of app")

	cm := watchedCM("app", map[string]string{"a": "1", "b": "2", "c": "3"})
	_, err := f.client.CoreV1().ConfigMaps("default").Update(context.Background(), cm, metav1.UpdateOptions{})
	require.NoError(t, err)
	f.eventually(func() bool { st, err := f.status("app"); return err == nil && st.Data["keys"] == "3" }, "the updated status")

	require.NoError(t, f.client.CoreV1().ConfigMaps("default").Delete(context.Background(), "app", metav1.DeleteOptions{}))
	f.eventually(func() bool { _, err := f.status("app"); return apierrors.IsNotFound(err) }, "the status removed")
}

// TestTombstoneKeyIsEnqueued: a delete the informer learned of by
// relisting reaches the handler as client-go's tombstone; the controller
// takes it for a watched object's and enqueues the object's key.
func TestTombstoneKeyIsEnqueued(t *testing.T) {
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	UseDropinInformer(factory, dropin.FactoryScope{})
	c, err := New(fake.NewClientset(), factory.Core().V1().ConfigMaps())
	require.NoError(t, err)
	defer c.queue.ShutDown()

	unwatched := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other"}}
	require.False(t, watched(cache.DeletedFinalStateUnknown{Key: "default/other", Obj: unwatched}), "an unwatched object's tombstone")
	tombstone := cache.DeletedFinalStateUnknown{Key: "default/app", Obj: watchedCM("app", nil)}
	require.True(t, watched(tombstone), "a watched object's tombstone")
	c.enqueue(tombstone)
	require.Equal(t, 1, c.queue.Len())
	key, shutdown := c.queue.Get()
	require.False(t, shutdown)
	require.Equal(t, "default/app", key)
	c.queue.Done(key)
}

// TestEveryReconcileTracesBackToTheWatch: with our informer injected and
// the traced queue, each reconcile's workqueue.process span hangs, through
// the workqueue and the handler call, from the ListAndWatch root of what
// the reflector received.
func TestEveryReconcileTracesBackToTheWatch(t *testing.T) {
	rec := recordGlobalSpans(t)

	f := newFixture(t, watchedCM("present", map[string]string{"a": "1"}))
	f.eventually(func() bool { _, err := f.status("present"); return err == nil }, "the status of present")
	_, err := f.client.CoreV1().ConfigMaps("default").Create(context.Background(), watchedCM("later", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	f.eventually(func() bool { _, err := f.status("later"); return err == nil }, "the status of later")
	f.stop()

	chains := spancheck.NewIndex(spansOf(rec)).ReconcileChains()
	reconciled := map[string]int{}
	for _, c := range chains {
		require.NoError(t, c.Check())
		require.True(t, c.FromWatch(), "%s", c)
		reconciled[c.Key()]++
	}
	for _, key := range []string{"default/present", "default/later"} {
		require.Positive(t, f.reconciles(key), key)
		require.Equal(t, f.reconciles(key), reconciled[key], "a traced chain for every reconcile of %s", key)
	}
}

// TestStatusIsStampedWithItsReconcile: the status ConfigMap a reconcile
// writes carries tracing.k8s.io/traceparent naming that reconcile's
// workqueue.process span (dropin.ReconcileContext gave sync its ctx), so a
// controller watching it links its trace of the write to this one.
func TestStatusIsStampedWithItsReconcile(t *testing.T) {
	rec := recordGlobalSpans(t)

	f := newFixture(t, watchedCM("present", map[string]string{"a": "1"}))
	f.eventually(func() bool { _, err := f.status("present"); return err == nil }, "the status of present")
	f.stop()
	st, err := f.status("present")
	require.NoError(t, err)
	sc, ignored, present := tracing.Traceparent(st)
	require.True(t, present, "stamped")
	require.Empty(t, ignored)

	var stamper *spancheck.Span
	for _, c := range spancheck.NewIndex(spansOf(rec)).ReconcileChains() {
		if c.Spans[0].SpanID == sc.SpanID() {
			stamper = c.Spans[0]
			require.True(t, c.FromWatch(), "%s", c)
		}
	}
	require.NotNil(t, stamper, "the stamp names a reconcile's workqueue.process span")
	assert.Equal(t, "default/present", stamper.Attr(tracing.KeyWorkqueueKey))
	assert.Equal(t, sc.TraceID(), stamper.TraceID)
}

// recordGlobalSpans sets otel's global TracerProvider, which the
// controller's informer and queue trace with, to one recording into the
// returned recorder, and puts the previous one back when the test ends.
func recordGlobalSpans(t *testing.T) *tracetest.SpanRecorder {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	previous := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { otel.SetTracerProvider(previous) })
	return rec
}

// spansOf is what rec recorded, as spancheck reads it.
func spansOf(rec *tracetest.SpanRecorder) []spancheck.Span {
	var spans []spancheck.Span
	for _, s := range rec.Ended() {
		spans = append(spans, spancheck.FromReadOnly(s))
	}
	return spans
}
