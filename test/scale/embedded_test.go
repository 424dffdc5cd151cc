package scale

import (
	"context"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/scalegen"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// The embedded API server (internal/apiserver) serves a large population of
// realistic pods over HTTP, and a relist of all of them, to client-go's
// informer and ours, on both first-request paths: the informers sync, the
// server compacts and ends every watch with a 410 Expired, and each
// reflector relists, and every handler
// of both libraries hears the same calls (each pod added once, then
// updated once by the relist). SCALE_EMBEDDED_PODS sizes it (default
// 5,000; 1,000 under -race); a run at 150,000 is noted in
// docs/performance.md.
func TestEmbeddedServerServesARelist(t *testing.T) {
	def := 5_000
	if testutil.Race {
		def = 1_000
	}
	n := envInt(t, "SCALE_EMBEDDED_PODS", def)
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	start := time.Now()
	gen := scalegen.NewGenerator(1)
	for i := range n {
		_, err := srv.Create(gen.Pod(i, 0, ""))
		require.NoError(t, err)
	}
	t.Logf("created %d pods in %v", n, time.Since(start).Round(time.Millisecond))
	client, err := kubernetes.NewForConfig(srv.Config())
	require.NoError(t, err)

	for _, path := range paths {
		t.Run(path.String(), func(t *testing.T) {
			srv.SetWatchListEnabled(path == scalegen.WatchList)
			var calls [][3]int64
			for _, lib := range Libraries {
				calls = append(calls, relistOnTheServer(t, srv, client, lib, path, n))
			}
			require.Equal(t, calls[0], calls[1], "client-go's handler calls, then ours")
		})
	}
}

// relistOnTheServer runs one informer of lib against srv until synced,
// forces a relist, and returns its handler's calls once it has heard the
// relist's update of every pod.
func relistOnTheServer(t *testing.T, srv *apiserver.Server, client kubernetes.Interface, lib Library, path scalegen.Path, n int) [3]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	lw := cache.NewListWatchFromClient(client.CoreV1().RESTClient(), "pods", "", fields.Everything())
	inf := lib.New(lw)
	h := &scalegen.Counter{}
	_, err := inf.AddEventHandler(h)
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { defer close(stopped); inf.RunWithContext(runCtx) }()
	defer func() {
		stop()
		<-stopped
		// The server drops a watch when its request's context ends: wait
		// for that, so that the next informer's watch is the only one.
		for deadline := time.Now().Add(10 * time.Second); srv.WatchCount() > 0 && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		runtime.GC()
	}()

	wait := func(total int64, what string) {
		t.Helper()
		select {
		case <-h.Reach(total):
		case <-ctx.Done():
			a, u, d := h.Counts()
			t.Fatalf("%s %s: %s: the handler had %d adds, %d updates, %d deletes when the test timed out", lib.Name, path, what, a, u, d)
		}
	}
	began := time.Now()
	wait(int64(n), "sync")
	synced := time.Now()
	before := len(srv.Requests())
	// What kube-apiserver does when a watch's revision is compacted away:
	// history forgotten, and the open watch ended with a 410 Expired ERROR
	// event. (Compact alone would not do: a client that is up to date may
	// go on watching from the compacted revision, as on etcd.)
	// On the LIST path the reflector opens its WATCH after the LIST's
	// objects reach the handlers: an event injected before would reach
	// no one.
	for srv.WatchCount() == 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("%s %s: the reflector opened no watch", lib.Name, path)
		case <-time.After(5 * time.Millisecond):
		}
	}
	srv.Compact()
	srv.InjectWatchEvent(apiserver.Pods, watch.Error, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired, Message: "too old resource version"})
	wait(int64(2*n), "relist")
	t.Logf("%s %s: every add handled %v after the start, the relist's last update %v after that",
		lib.Name, path, synced.Sub(began).Round(time.Millisecond), time.Since(synced).Round(time.Millisecond))
	a, u, d := h.Counts()
	require.Equal(t, [3]int64{int64(n), int64(n), 0}, [3]int64{a, u, d}, "%s %s: adds, updates, deletes", lib.Name, path)

	// The relist went to the server as the path says: a paged LIST, or a
	// watch-list stream.
	var relisted []string
	for _, r := range srv.Requests()[before:] {
		switch {
		case r.Verb == "list":
			relisted = append(relisted, "list")
		case r.IsWatchList():
			relisted = append(relisted, "watch-list")
		}
	}
	want := "watch-list"
	if path == scalegen.PagedList {
		want = "list"
	}
	require.Contains(t, relisted, want, "%s %s: requests after the compaction: %v", lib.Name, path, relisted)
	if path == scalegen.PagedList {
		pages := 0
		for _, r := range relisted {
			if r == "list" {
				pages++
			}
		}
		require.GreaterOrEqual(t, pages, n/500, "%s: the relist is paged (client-go's 500 a page): %d LIST requests", lib.Name, pages)
	}
	return [3]int64{a, u, d}
}
