//go:build e2e

package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/informer-anatomy/informer-anatomy/dropin"
)

// TestReadYourWritesOnARealAPIServer: with ManagerOptions (our informer,
// EnableReadYourWritesConsistency on), a create, an update and a delete made
// through the manager's client are seen by a Get through the same client at
// once, read from the cache (our informer's), against kube-apiserver
// (hack/local-cluster.sh). Twenty rounds: without read-your-writes the
// cache lags the write by a watch event's trip, and the first Get of a
// round finds nothing or the old version.
func TestReadYourWritesOnARealAPIServer(t *testing.T) {
	cfg, _, ns := clusterNamespace(t, "e2e-ryw")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// All namespaces: with DefaultNamespaces the cache wraps each
	// namespace's informer in one of its own, and ours is the one inside.
	mgr, err := ctrl.NewManager(cfg, ManagerOptions(""))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	require.True(t, mgr.GetCache().WaitForCacheSync(ctx))
	c := mgr.GetClient()

	// The reads below come from the cache, and the cache is our informer.
	inf, err := mgr.GetCache().GetInformer(ctx, &corev1.ConfigMap{})
	require.NoError(t, err)
	require.IsType(t, &dropin.Informer{}, inf)

	for i := range 20 {
		name := fmt.Sprintf("ryw-%d", i)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"n": "0"}}
		require.NoError(t, c.Create(ctx, cm))
		var got corev1.ConfigMap
		require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cm), &got), "round %d: Get at once after Create", i)
		require.Equal(t, cm.ResourceVersion, got.ResourceVersion, "round %d: the cache has the create", i)

		got.Data["n"] = "1"
		require.NoError(t, c.Update(ctx, &got))
		var again corev1.ConfigMap
		require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cm), &again))
		require.Equal(t, got.ResourceVersion, again.ResourceVersion, "round %d: the cache has the update", i)
		require.Equal(t, "1", again.Data["n"], "round %d", i)

		var list corev1.ConfigMapList
		require.NoError(t, c.List(ctx, &list, client.InNamespace(ns)))
		require.Contains(t, names(list), name, "round %d: a List at once has it too", i)

		require.NoError(t, c.Delete(ctx, &again))
		err := c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
		require.True(t, apierrors.IsNotFound(err), "round %d: the cache has the delete (got %v)", i, err)
	}
}

func names(l corev1.ConfigMapList) []string {
	var out []string
	for _, cm := range l.Items {
		out = append(out, cm.Name)
	}
	return out
}
