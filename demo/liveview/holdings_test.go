package liveview_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	factory "github.com/informer-anatomy/informer-anatomy/chapters/06-factory"
	"github.com/informer-anatomy/informer-anatomy/demo/informers"
	"github.com/informer-anatomy/informer-anatomy/demo/liveview"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
	"github.com/informer-anatomy/informer-anatomy/liveprobe"
)

// holdingsRun is one informer of the demo on the embedded server's
// ConfigMaps of namespace ns, counted and shown on a session's page.
type holdingsRun struct {
	srv     *apiserver.Server
	session *liveview.Session
	inf     processor.SharedIndexInformer
	bytes   *liveprobe.CacheBytes
}

func startHoldingsRun(t *testing.T, ns string, transform func(any) (any, error)) *holdingsRun {
	t.Helper()
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	for i := range 20 {
		_, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprint("cm-", i)},
			Data: map[string]string{"k": strings.Repeat("x", 100*i)}})
		require.NoError(t, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider()
	s := liveview.ServeSession(ln, "http://"+ln.Addr().String()+"/", liveview.SessionOptions{TracerProvider: tp, Traces: 10,
		Warn: func(string, ...any) {}, Stdout: io.Discard})
	t.Cleanup(s.Stop)
	client, err := factory.NewForConfig(srv.Config())
	require.NoError(t, err)
	f := factory.NewSharedInformerFactoryWithOptions(client, 0, factory.WithNamespace(ns))
	r := &holdingsRun{srv: srv, session: s, bytes: &liveprobe.CacheBytes{}}
	var probe *liveprobe.ReflectorProbe
	r.inf, probe, err = informers.For(f, client, informers.Spec{Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: ns,
		Queue: processor.RealFIFOQueue, Bytes: r.bytes})
	require.NoError(t, err)
	if transform != nil {
		require.NoError(t, r.inf.SetTransform(r.bytes.Transform(transform)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx.Done())
	t.Cleanup(func() { cancel(); f.Shutdown() })
	s.Attach(r.inf, probe, r.bytes, "configmaps", "embedded", nil)
	return r
}

// pipeline is the page's pipeline as api/state answers it.
func (r *holdingsRun) pipeline(t *testing.T) liveview.Pipeline {
	t.Helper()
	res, err := http.Get(r.session.URL() + "api/state")
	require.NoError(t, err)
	defer res.Body.Close()
	var st liveview.State
	require.NoError(t, json.NewDecoder(res.Body).Decode(&st))
	return st.Pipeline
}

// cachedSize is the estimate summed over what the cache holds now.
func (r *holdingsRun) cachedSize() int64 {
	var n int64
	for _, o := range r.inf.GetStore().List() {
		n += liveprobe.ObjectSize(o)
	}
	return n
}

// The demo's page shows what its informer holds as dropin's does (one
// code, liveprobe.Holdings): the objects cached, the running estimate of
// their bytes (equal to the estimate summed over the cache, after
// updates and a delete), no "before the transform" without one, and the
// last relist: "start" with its objects and duration; then, after a 410,
// a relist held back by the server shows "fetching" with the heap peak
// the session sampled meanwhile (it tells the probe the heap once a
// second), and once released, its reason, duration and objects.
func TestDemoPageShowsBytesAndLastRelist(t *testing.T) {
	const ns = "holdings"
	r := startHoldingsRun(t, ns, nil)
	testutil.Eventually(t, "20 objects counted", func() bool {
		p := r.pipeline(t)
		return p.Indexer == 20 && p.CachedBytes == r.cachedSize() && p.LastRelist != nil && p.LastRelist.DurationMillis >= 0
	})
	p := r.pipeline(t)
	assert.Greater(t, p.CachedBytes, int64(100*190), "the data's bytes alone are 19,000")
	assert.Equal(t, int64(-1), p.BytesBeforeTransform, "no transform")
	assert.Equal(t, "start", p.LastRelist.Reason)
	assert.Equal(t, 20, p.LastRelist.Objects)

	for i := range 5 {
		obj, err := r.srv.Get(apiserver.ConfigMaps, ns, fmt.Sprint("cm-", i))
		require.NoError(t, err)
		cm := obj.(*corev1.ConfigMap)
		cm.Data = map[string]string{"k": strings.Repeat("y", 5000)}
		_, err = r.srv.Update(cm)
		require.NoError(t, err)
	}
	require.NoError(t, r.srv.Delete(apiserver.ConfigMaps, ns, "cm-19"))
	testutil.Eventually(t, "updates and a delete counted", func() bool {
		p := r.pipeline(t)
		return p.Indexer == 19 && p.CachedBytes == r.cachedSize()
	})

	// The next WATCH gets a 410; the relist's stream is held by the
	// server until the page has shown it fetching, with a heap peak.
	r.srv.Inject(apiserver.Fault{Verb: "watch", Status: 410})
	release := r.srv.StallNext("watch")
	t.Cleanup(release)
	r.srv.CloseWatches()
	testutil.Eventually(t, "the relist shown fetching, with a heap peak", func() bool {
		p := r.pipeline(t)
		return p.LastRelist != nil && strings.HasPrefix(p.LastRelist.Reason, "410 ") && p.LastRelist.DurationMillis == -1 && p.LastRelist.PeakHeap > 0
	})
	release()
	testutil.Eventually(t, "the relist shown done", func() bool {
		p := r.pipeline(t)
		return p.LastRelist.DurationMillis >= 0 && p.LastRelist.Objects == 19 && p.Indexer == 19 && p.CachedBytes == r.cachedSize()
	})
	assert.Positive(t, r.pipeline(t).LastRelist.PeakHeap)
}

// With a transform wrapped by the count (informers.Spec.Bytes), the page
// shows the bytes before it above the bytes held: here it drops every
// ConfigMap's data.
func TestDemoPageShowsBytesBeforeTheTransform(t *testing.T) {
	r := startHoldingsRun(t, "transform", func(o any) (any, error) {
		if cm, ok := o.(*corev1.ConfigMap); ok {
			cm.Data = nil
		}
		return o, nil
	})
	testutil.Eventually(t, "20 objects counted", func() bool {
		p := r.pipeline(t)
		return p.Indexer == 20 && p.CachedBytes == r.cachedSize()
	})
	p := r.pipeline(t)
	assert.Less(t, p.CachedBytes, int64(100*190), "the transform dropped the data")
	// Above twice the bytes held, not by the data's 19,000: the RealFIFO,
	// as client-go's, gives a streamed object to the transform twice (as
	// it arrives, and again in Replace), and the second call, given what
	// the first returned, counts as a transform that kept everything.
	assert.Greater(t, p.BytesBeforeTransform, 2*p.CachedBytes, "before the transform: the data")
}
