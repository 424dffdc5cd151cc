//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/examples/clientgo-controller/controller"
)

// clientsetNamespace makes a namespace named prefix-<nanoseconds> on the
// cluster that KUBECONFIG names (hack/local-cluster.sh's), deleted when the
// test ends; it returns the kubeconfig's path, a clientset on the cluster
// and the namespace's name.
func clientsetNamespace(t *testing.T, prefix string) (kubeconfig string, client *kubernetes.Clientset, ns string) {
	t.Helper()
	kubeconfig = os.Getenv("KUBECONFIG")
	if kubeconfig == "" {
		t.Fatal(`KUBECONFIG is not set: run these tests with hack/test.sh, or after hack/local-cluster.sh up && eval "$(hack/local-cluster.sh env)"`)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	require.NoError(t, err)
	client, err = kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	ns = fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
	_, err = client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	return kubeconfig, client, ns
}

// TestClientGoControllerOnARealAPIServer runs the sample-controller-style
// example, with our informer injected through InformerFor, against
// kube-apiserver: a create, an update and a delete of a watched ConfigMap
// each reach the reconcile, and the status ConfigMap follows.
func TestClientGoControllerOnARealAPIServer(t *testing.T) {
	_, client, ns := clientsetNamespace(t, "e2e-ctrl")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	scope := dropin.FactoryScope{Namespace: ns}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, scope.Options()...)
	controller.UseDropinInformer(factory, scope)
	c, err := controller.New(client, factory.Core().V1().ConfigMaps())
	require.NoError(t, err)
	var mu sync.Mutex
	reconciled := map[string]int{}
	c.Reconciled = func(key string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			reconciled[key]++
		}
	}
	count := func(key string) int {
		mu.Lock()
		defer mu.Unlock()
		return reconciled[key]
	}
	factory.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, 2) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
		factory.Shutdown()
	}()

	cms := client.CoreV1().ConfigMaps(ns)
	key := ns + "/app"
	status := func() (*corev1.ConfigMap, error) {
		return cms.Get(ctx, "app"+controller.StatusSuffix, metav1.GetOptions{})
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Labels: map[string]string{controller.WatchLabel: "true"}},
		Data: map[string]string{"a": "1"}}
	created, err := cms.Create(ctx, cm, metav1.CreateOptions{})
	require.NoError(t, err)
	// Each wait asks for the reconcile's write and for its count: the
	// reconcile writes the status object, and Reconciled is called after
	// it returns, so a check of the count right after seeing the write
	// could come first (it did once in a CI run: 0 reconciles counted).
	require.Eventually(t, func() bool {
		st, err := status()
		return err == nil && st.Data["observedResourceVersion"] == created.ResourceVersion && count(key) > 0
	}, 30*time.Second, 20*time.Millisecond, "the create reached the reconcile")
	afterCreate := count(key)

	created.Data = map[string]string{"a": "1", "b": "2"}
	updated, err := cms.Update(ctx, created, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := status()
		return err == nil && st.Data["observedResourceVersion"] == updated.ResourceVersion && st.Data["keys"] == "2" && count(key) > afterCreate
	}, 30*time.Second, 20*time.Millisecond, "the update reached the reconcile")
	afterUpdate := count(key)

	require.NoError(t, cms.Delete(ctx, "app", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		_, err := status()
		return apierrors.IsNotFound(err) && count(key) > afterUpdate
	}, 30*time.Second, 20*time.Millisecond, "the delete reached the reconcile")
}
