package factory

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

func setup(t *testing.T) (*apiserver.Server, *Client) {
	t.Helper()
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	client, err := NewForConfig(srv.Config())
	require.NoError(t, err)
	return srv, client
}

func requests(srv *apiserver.Server, verb, resource string) []apiserver.Request {
	var out []apiserver.Request
	for _, r := range srv.Requests() {
		if r.Verb == verb && r.Resource == resource {
			out = append(out, r)
		}
	}
	return out
}

func TestOneInformerPerTypeFirstWins(t *testing.T) {
	_, client := setup(t)
	f := NewSharedInformerFactory(client, 0)
	a := f.Core().V1().Pods().Informer()
	assert.Same(t, a, f.Core().V1().Pods().Informer())
	g, err := f.ForResource(corev1.SchemeGroupVersion.WithResource("pods"))
	require.NoError(t, err)
	assert.Same(t, a, g.Informer(), "ForResource of a typed resource is the typed informer")

	called := false
	assert.Same(t, a, f.InformerFor(&corev1.Pod{}, func(*Client, time.Duration) processor.SharedIndexInformer {
		called = true
		return nil
	}))
	assert.False(t, called, "the first caller's newFunc wins; later ones are not called")
}

func TestStartIsIdempotentAndWaitForCacheSyncCoversStartedOnly(t *testing.T) {
	srv, client := setup(t)
	_, _ = srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}})
	f := NewSharedInformerFactory(client, 0)
	pods := f.Core().V1().Pods()
	pods.Informer()
	stop := make(chan struct{})
	f.Start(stop)
	f.Start(stop) // again: nothing new to start

	_ = f.Core().V1().ConfigMaps().Informer() // created, not started
	synced := f.WaitForCacheSync(stop)
	assert.Equal(t, map[reflect.Type]bool{reflect.TypeOf(&corev1.Pod{}): true}, synced,
		"only started informers are waited for and reported")
	// Each started informer makes one request, the stream of its initial
	// state (client-go's default since 1.35), which stays open.
	assert.Len(t, requests(srv, "watch", "pods"), 1, "a second Start did not start the pod informer again")
	assert.Equal(t, "true", requests(srv, "watch", "pods")[0].Query.Get("sendInitialEvents"))
	assert.Empty(t, requests(srv, "watch", "configmaps"))

	got, err := pods.Lister().Pods("ns").Get("web")
	require.NoError(t, err)
	assert.Equal(t, "web", got.Name)

	f.Start(stop) // starts the configmap informer now
	assert.Equal(t, map[reflect.Type]bool{reflect.TypeOf(&corev1.Pod{}): true, reflect.TypeOf(&corev1.ConfigMap{}): true}, f.WaitForCacheSync(stop))
	close(stop)
	f.Shutdown()
	assert.True(t, pods.Informer().IsStopped(), "Shutdown returns only after every informer has stopped")
	f.Start(make(chan struct{}))
	assert.Len(t, requests(srv, "watch", "configmaps"), 1, "Start after Shutdown does nothing")
}

func TestOptions(t *testing.T) {
	srv, client := setup(t)
	for _, p := range []struct{ ns, name, app string }{{"a", "web", "web"}, {"a", "db", "db"}, {"b", "web", "web"}} {
		_, _ = srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name, Labels: map[string]string{"app": p.app}}})
	}
	var resync time.Duration
	f := NewSharedInformerFactoryWithOptions(client, time.Minute,
		WithNamespace("a"),
		WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "app=web" }),
		WithCustomResyncConfig(map[metav1.Object]time.Duration{&corev1.ConfigMap{}: 5 * time.Second}),
		WithTransform(func(obj any) (any, error) {
			p := obj.(*corev1.Pod).DeepCopy()
			p.ManagedFields = nil
			p.Annotations = map[string]string{"transformed": "yes"}
			return p, nil
		}))
	pods := f.Core().V1().Pods()
	podInformer := pods.Informer()
	f.InformerFor(&corev1.ConfigMap{}, func(c *Client, d time.Duration) processor.SharedIndexInformer {
		resync = d
		return podInformer // any informer will do for this check (newFunc must not call the factory)
	})
	stop := make(chan struct{})
	defer close(stop)
	f.Start(stop)
	f.WaitForCacheSync(stop)

	all, err := pods.Lister().List(labels.Everything())
	require.NoError(t, err)
	require.Len(t, all, 1, "namespace a, app=web only")
	assert.Equal(t, "a", all[0].Namespace)
	assert.Equal(t, "yes", all[0].Annotations["transformed"])
	stream := requests(srv, "watch", "pods")[0]
	assert.Equal(t, "true", stream.Query.Get("sendInitialEvents"), "the initial state is streamed")
	assert.Equal(t, "app=web", stream.Query.Get("labelSelector"))
	assert.Equal(t, "a", stream.Namespace)
	assert.Equal(t, 5*time.Second, resync, "custom resync for the type")
}

func TestForResourceServesAnyResourceAsUnstructured(t *testing.T) {
	srv, client := setup(t)
	_, err := srv.Create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "token"}})
	require.NoError(t, err)
	f := NewSharedInformerFactory(client, 0)
	g, err := f.ForResource(corev1.SchemeGroupVersion.WithResource("secrets"))
	require.NoError(t, err)
	g2, _ := f.ForResource(corev1.SchemeGroupVersion.WithResource("secrets"))
	assert.Same(t, g.Informer(), g2.Informer(), "one informer per resource")

	stop := make(chan struct{})
	defer close(stop)
	f.Start(stop)
	assert.True(t, f.WaitForCacheSync(stop)[reflect.TypeOf(&unstructured.Unstructured{})])
	obj, err := g.Lister().ByNamespace("ns").Get("token")
	require.NoError(t, err)
	u := obj.(*unstructured.Unstructured)
	assert.Equal(t, "Secret", u.GetKind())
	assert.Equal(t, "token", u.GetName())

	_, err = srv.Create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "second"}})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(g.Informer().GetStore().List()) == 2 }, 10*time.Second, 5*time.Millisecond,
		"watch events arrive as unstructured objects too")
}

// TestWaitForCacheSyncWithContext: synced informers are reported with no
// error; an informer whose initial state never arrives makes the wait end
// with the context's cause, which AsError wraps and names the type with.
func TestWaitForCacheSyncWithContext(t *testing.T) {
	srv, client := setup(t)
	f := NewSharedInformerFactory(client, 0)
	f.Core().V1().Pods().Informer()
	stop := make(chan struct{})
	defer close(stop)
	f.Start(stop)
	res := f.WaitForCacheSyncWithContext(context.Background())
	require.NoError(t, res.Err)
	require.NoError(t, res.AsError())
	require.Equal(t, map[reflect.Type]bool{reflect.TypeOf(&corev1.Pod{}): true}, res.Synced)

	// The configmaps' stream is held by the server: that cache cannot sync.
	release := srv.StallNext("watch")
	defer release()
	f.Core().V1().ConfigMaps().Informer()
	f.Start(stop)
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("the test gave up")
	cancel(cause)
	res = f.WaitForCacheSyncWithContext(ctx)
	require.ErrorIs(t, res.Err, cause)
	require.Equal(t, map[reflect.Type]bool{reflect.TypeOf(&corev1.Pod{}): true, reflect.TypeOf(&corev1.ConfigMap{}): false}, res.Synced)
	err := res.AsError()
	require.ErrorIs(t, err, cause)
	require.EqualError(t, err, "failed to sync all caches: *v1.ConfigMap: the test gave up")
}

// TestWithInformerName: every informer gets the name's identifier for its
// resource (and is named by the resource in spans); Shutdown releases the
// name, so it can be registered again.
func TestWithInformerName(t *testing.T) {
	processor.ResetInformerNamesForTesting()
	t.Cleanup(processor.ResetInformerNamesForTesting)
	_, client := setup(t)
	name, err := processor.NewInformerName("my-controller")
	require.NoError(t, err)
	f := NewSharedInformerFactoryWithOptions(client, 0, WithInformerName(name))
	require.Same(t, name, f.InformerName())
	f.Core().V1().Pods().Informer()
	_, err = processor.NewInformerName("my-controller")
	require.Error(t, err, "the name is taken while the factory lives")
	stop := make(chan struct{})
	f.Start(stop)
	close(stop)
	f.Shutdown()
	again, err := processor.NewInformerName("my-controller")
	require.NoError(t, err, "Shutdown released the name")
	again.Release()
}

// TestStartWithContextRunsUntilCtxIsDone: StartWithContext runs the
// informers with ctx, as client-go's factory does: they sync, and ending ctx
// stops them, so Shutdown returns; a Start after that does nothing. The same
// steps on client-go's factory, over the same server, give the same answers.
func TestStartWithContextRunsUntilCtxIsDone(t *testing.T) {
	srv, client := setup(t)
	_, _ = srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}})
	theirsClient, err := kubernetes.NewForConfig(srv.Config())
	require.NoError(t, err)

	type answers struct {
		Synced           map[reflect.Type]bool
		StoppedBefore    bool
		StoppedAfter     bool
		CachedAfterStart []string
	}
	run := func(start func(context.Context), wait func(context.Context) map[reflect.Type]bool, shutdown func(),
		isStopped func() bool, listKeys func() []string) answers {
		ctx, cancel := context.WithCancel(context.Background())
		start(ctx)
		var a answers
		a.Synced = wait(ctx)
		a.StoppedBefore = isStopped()
		a.CachedAfterStart = listKeys()
		cancel()
		shutdown()
		a.StoppedAfter = isStopped()
		return a
	}

	ours := NewSharedInformerFactory(client, 0)
	oursInf := ours.Core().V1().Pods().Informer()
	got := run(ours.StartWithContext, func(ctx context.Context) map[reflect.Type]bool { return ours.WaitForCacheSyncWithContext(ctx).Synced },
		ours.Shutdown, oursInf.IsStopped, oursInf.GetStore().ListKeys)

	theirs := informers.NewSharedInformerFactory(theirsClient, 0)
	theirsInf := theirs.Core().V1().Pods().Informer()
	want := run(theirs.StartWithContext, func(ctx context.Context) map[reflect.Type]bool { return theirs.WaitForCacheSyncWithContext(ctx).Synced },
		theirs.Shutdown, theirsInf.IsStopped, theirsInf.GetStore().ListKeys)

	require.Equal(t, answers{Synced: map[reflect.Type]bool{reflect.TypeOf(&corev1.Pod{}): true}, StoppedAfter: true, CachedAfterStart: []string{"ns/web"}}, want)
	require.Equal(t, want, got)
	before := len(requests(srv, "watch", "pods"))
	ours.StartWithContext(context.Background())
	require.Len(t, requests(srv, "watch", "pods"), before, "StartWithContext after Shutdown does nothing")
}
