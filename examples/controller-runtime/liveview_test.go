package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	kcache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
)

// The manager's metrics server, made from ManagerOptions' Metrics with an
// address, serves the live view beside /metrics (ExtraHandlers): its state
// names the informer the cache would build (dropin.NewSharedIndexInformer)
// and the controller's queue (NewQueue) by its name.
func TestMetricsServerServesTheLiveView(t *testing.T) {
	opts := ManagerOptions("").Metrics
	opts.BindAddress = "127.0.0.1:0"
	srv, err := metricsserver.NewServer(opts, nil, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { require.NoError(t, srv.Start(ctx)) })
	defer func() { cancel(); wg.Wait() }()
	bound := srv.(interface{ GetBindAddr() string })
	require.Eventually(t, func() bool { return bound.GetBindAddr() != "" }, 5e9, 1e6, "the metrics server listens")

	inf := ManagerOptions("").Cache.NewInformer(&kcache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (kruntime.Object, error) {
			return &corev1.ConfigMapList{}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}, &corev1.ConfigMap{}, 0, kcache.Indexers{})
	_, err = inf.AddEventHandler(kcache.ResourceEventHandlerFuncs{})
	require.NoError(t, err)
	q := NewQueue("configmap-example-liveview", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()

	get := func(path string) string {
		res, err := http.Get("http://" + bound.GetBindAddr() + LiveViewPath + path)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s: %s", path, b)
		return string(b)
	}
	var st livepage.ProcessState
	require.NoError(t, json.Unmarshal([]byte(get("api/state")), &st))
	require.True(t, slices.ContainsFunc(st.Process.Informers, func(i livepage.ProcessInformer) bool {
		return i.Type == "*v1.ConfigMap" && len(i.Handlers) == 1
	}), "%+v", st.Process.Informers)
	require.True(t, slices.ContainsFunc(st.Process.Queues, func(q livepage.ProcessQueue) bool {
		return q.Name == "configmap-example-liveview" && q.Kind == "priority"
	}), "%+v", st.Process.Queues)
	require.True(t, strings.Contains(get(""), `src="app.js"`), "the live page")
	// The view holds informers weakly: one built and never run is listed
	// only while something holds it (a manager's cache does).
	runtime.KeepAlive(inf)
}
