//go:build e2e

package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informer-anatomy/informer-anatomy/demo/demoproc/demoproctest"
	"github.com/informer-anatomy/informer-anatomy/demo/liveview"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// demoScaleObjects is how many ConfigMaps the demo's cluster page test
// creates (about 1 KiB each): issue 36's 20,000.
const demoScaleObjects = 20_000

// `trace-demo --cluster --ui` on kube-apiserver with 20,000 ConfigMaps in
// its namespace: it syncs (the terminal says so), the page's informer
// caches every one, and api/state says
// so with the bytes they hold (at least their data's 1 KiB each; no
// transform, so none before it) and the first relist: "start", every
// object, its duration, as the probe saw the stream (or LIST) from the real
// server; its answers hold counters and the last events, not the objects
// (times logged, not asserted). A ConfigMap changed then reaches the page
// by the watch, not by another relist.
func TestTraceDemoClusterPageWithTwentyThousandConfigMaps(t *testing.T) {
	kubeconfig, client, ns := namespaceWithConfigMaps(t, "e2e-demo-scale", demoScaleObjects)

	bin := demoproctest.Build(t)
	started := time.Now()
	p := demoproctest.Start(t, 2*time.Minute, bin, "--cluster", "--kubeconfig", kubeconfig,
		"--resource", "configmaps", "--namespace", ns, "--exporter", "none")
	defer func() {
		code, err := p.Stop()
		assert.NoError(t, err, "trace-demo ends on Ctrl-C; output:\n%s", p.Output())
		assert.Equal(t, 0, code, "trace-demo ends cleanly on Ctrl-C; output:\n%s", p.Output())
	}()
	st := lvWaitState(t, p.URL, "every ConfigMap cached, with its bytes and the first relist", func(st liveview.State) bool {
		pl := st.Pipeline
		// The cache's Replace puts every object in at once; the bytes are
		// counted as HandleDeltas hands each one on: wait for all.
		return pl.Indexer == demoScaleObjects && pl.HandleDeltas >= demoScaleObjects && pl.LastRelist != nil &&
			pl.LastRelist.DurationMillis >= 0 && pl.Reflector.Phase == "WATCH"
	})
	pl := st.Pipeline
	t.Logf("page synced %v after the start: %d objects, %d bytes held (estimate), last relist %+v; reflector %v",
		time.Since(started).Round(time.Millisecond), pl.Indexer, pl.CachedBytes, *pl.LastRelist, pl.Reflector.Requests)
	assert.GreaterOrEqual(t, pl.CachedBytes, int64(demoScaleObjects*1024), "each ConfigMap holds about 1 KiB of data")
	assert.Equal(t, int64(-1), pl.BytesBeforeTransform, "no transform")
	assert.Equal(t, "start", pl.LastRelist.Reason)
	assert.Equal(t, demoScaleObjects, pl.LastRelist.Objects, "the first relist fetched every object")
	assert.Empty(t, pl.Reflector.LastError)
	// The demo says it synced, as a user reads it in the terminal.
	synced := "synced: 20000 objects in the cache"
	for deadline := time.Now().Add(time.Minute); !strings.Contains(p.Output(), synced) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond) // a polling interval, not an assertion
	}
	require.Contains(t, p.Output(), synced)

	// api/state, as the page reads it five times a second.
	gets := testutil.TimedGets(t, p.URL+"api/state", 50, &st)
	t.Logf("api/state at %d objects: %v", demoScaleObjects, gets)
	assert.Less(t, gets.MaxBody, 512<<10, "api/state holds counters and the last events, not the objects")
	assert.LessOrEqual(t, st.TracesKept, 5000, "the page's span store keeps its last traces only")

	// A change reaches the page by the watch.
	cm, err := client.CoreV1().ConfigMaps(ns).Get(context.Background(), "scale-00007", metav1.GetOptions{})
	require.NoError(t, err)
	cm.Data["index"] = "changed"
	cm, err = client.CoreV1().ConfigMaps(ns).Update(context.Background(), cm, metav1.UpdateOptions{})
	require.NoError(t, err)
	st = lvWaitState(t, p.URL, "the change seen by the watch", func(st liveview.State) bool {
		return st.Pipeline.Reflector.ResourceVersion == cm.ResourceVersion && st.Pipeline.Reflector.WatchEvents >= 1
	})
	assert.Equal(t, demoScaleObjects, st.Pipeline.Indexer)
	assert.Equal(t, pl.Reflector.Streams, st.Pipeline.Reflector.Streams, "no new stream")
	assert.Equal(t, pl.Reflector.Lists, st.Pipeline.Reflector.Lists, "no new LIST")
	assert.Equal(t, "start", st.Pipeline.LastRelist.Reason, "no relist since")
	assert.True(t, slices.ContainsFunc(st.Events, func(e liveview.Event) bool { return strings.HasSuffix(e.Key, "/scale-00007") }),
		"the change in the page's event list")
}
