package controller

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/dropin"
)

// The controller's own tests, in the sample-controller style: a fake
// clientset, a factory, the controller, and the world after it ran. They
// run with our informer injected, as a user's would after the one-line
// change.

func watchedCM(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: "uid-" + "name",
		Labels: map[string]string{WatchLabel: "true"}}, Data: data}
}

type fixture struct {
	t       *testing.T
	client  *fake.Clientset
	factory informers.SharedInformerFactory
	c       *Controller

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
	UseDropinInformer(f.factory, metav1.NamespaceAll)
	c, err := New(f.client, f.factory.Core().V1().ConfigMaps())
	require.NoError(t, err)
	c.Reconciled = func(key string, err error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		require.NoError(t, err, key)
		f.reconcile[key]++
	}
	f.c = c
	ctx, cancel := context.WithCancel(context.Background())
	f.factory.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, 2) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		f.factory.Shutdown()
	})
	return f
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
	UseDropinInformer(factory, "")
	first := unwrap(factory.Core().V1().ConfigMaps().Informer())
	require.IsType(t, &dropin.Informer{}, first, "the factory's informer")
	require.Same(t, first, unwrap(factory.Core().V1().ConfigMaps().Informer()), "one informer, shared")
}

// unwrap takes off cache.NewTypedSharedIndexInformer's wrapper, which
// embeds the informer it was given.
func unwrap(inf cache.SharedIndexInformer) any {
	v := reflect.ValueOf(inf)
	for {
		e := reflect.Indirect(v)
		if e.Kind() != reflect.Struct || e.NumField() == 0 || !e.Type().Field(0).Anonymous {
			return v.Interface()
		}
		v = e.Field(0).Elem()
	}
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
// relisting reaches the handler as client-go's tombstone, whose key the
// controller enqueues.
func TestTombstoneKeyIsEnqueued(t *testing.T) {
	require.True(t, watched(cache.DeletedFinalStateUnknown{Key: "default/app", Obj: watchedCM("app", nil)}))
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(cache.DeletedFinalStateUnknown{Key: "default/app", Obj: watchedCM("app", nil)})
	require.NoError(t, err)
	require.Equal(t, "default/app", key)
}
