package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/examples/clientgo-controller/controller"
	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// The example's live view, served as main serves it (--live-view-addr):
// its state names the ConfigMap informer, the controller's handler and its
// queue, "configmap-status"; the page is the live page.
func TestLiveViewServesTheControllersInformerAndQueue(t *testing.T) {
	client := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app",
		Labels: map[string]string{controller.WatchLabel: "true"}}})
	factory := informers.NewSharedInformerFactory(client, 0)
	controller.UseDropinInformer(factory, dropin.FactoryScope{})
	c, err := controller.New(client, factory.Core().V1().ConfigMaps())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	url, waitServer, err := serveLiveView(ctx, "127.0.0.1:0")
	require.NoError(t, err)
	factory.Start(ctx.Done())
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, c.Run(ctx, 1)) })
	t.Cleanup(func() { cancel(); wg.Wait(); factory.Shutdown(); waitServer() })

	get := func(path string) string {
		res, err := http.Get(url + path)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s: %s", path, b)
		return string(b)
	}
	var p livepage.Process
	testutil.Eventually(t, "the informer synced, its handler called, the key reconciled", func() bool {
		var st livepage.ProcessState
		require.NoError(t, json.Unmarshal([]byte(get("api/state")), &st))
		p = st.Process
		i := slices.IndexFunc(p.Informers, func(i livepage.ProcessInformer) bool { return i.Type == "*v1.ConfigMap" })
		q := slices.IndexFunc(p.Queues, func(q livepage.ProcessQueue) bool { return q.Name == "configmap-status" })
		return i >= 0 && q >= 0 && p.Informers[i].Synced && len(p.Informers[i].Handlers) == 1 &&
			p.Informers[i].Handlers[0].Calls >= 1 && p.Informers[i].Handlers[0].Synced
	})
	i := slices.IndexFunc(p.Informers, func(i livepage.ProcessInformer) bool { return i.Type == "*v1.ConfigMap" })
	assert.Contains(t, p.Informers[i].Handlers[0].Name, "FilteringResourceEventHandler", "the handler by its type's name")
	assert.True(t, strings.Contains(get(""), `src="app.js"`), "the live page")
}
