//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/informer-anatomy/informer-anatomy/demo/demoproc/demoproctest"
	"github.com/informer-anatomy/informer-anatomy/demo/liveview"
	"github.com/informer-anatomy/informer-anatomy/liveprobe"
)

// The live view on a real cluster: the reflector box is the probe's, as on
// the embedded server (the first request a stream, which sends every
// object and then a bookmark, and goes on as the watch with its events),
// and there are no controls. Run
// for a typed resource (configmaps: the demo's own typed informer) and one
// the factory has no type for (secrets: an unstructured informer), in a
// namespace of this test's own.
//
// This cluster's configmaps bypass the API server's watch cache
// (hack/local-cluster.sh), so they always stream. Its secrets are
// watch-cached, and a stream of them needs etcd's RequestWatchProgress,
// which the Debian etcd 3.4.23 lacks: there kube-apiserver ends the stream
// with a 500 ERROR event and the reflector falls back to LIST, then WATCH,
// as client-go's does; the box must show that too. (On an etcd that has
// it, secrets stream like configmaps.)
func TestLiveViewOnTheRealClusterShowsTheReflector(t *testing.T) {
	kubeconfig := os.Getenv("KUBECONFIG")
	require.NotEmpty(t, kubeconfig, `KUBECONFIG is not set: run with hack/test.sh, or after hack/local-cluster.sh up && eval "$(hack/local-cluster.sh env)"`)
	c := newCluster(t)
	bin := demoproctest.Build(t)
	for _, resource := range []string{"configmaps", "secrets"} {
		t.Run(resource, func(t *testing.T) {
			create := func(name string) string {
				var obj runtime.Object = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
				if resource == "secrets" {
					obj = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}
				}
				require.NoError(t, c.client.Post().Namespace(c.ns).Resource(resource).Body(obj).Do(context.Background()).Into(obj))
				m, err := meta.Accessor(obj)
				require.NoError(t, err)
				return m.GetResourceVersion()
			}
			listedRV := create("listed-" + resource)

			p := demoproctest.Start(t, time.Minute, bin, "--cluster", "--kubeconfig", kubeconfig,
				"--resource", resource, "--namespace", c.ns, "--exporter", "none")
			url := p.URL
			defer func() {
				code, err := p.Stop()
				assert.NoError(t, err, "trace-demo ends on Ctrl-C; output:\n%s", p.Output())
				assert.Equal(t, 0, code, "trace-demo ends cleanly on Ctrl-C; output:\n%s", p.Output())
			}()

			st := lvWaitState(t, url, "the informer synced and watching", func(st liveview.State) bool {
				return st.Pipeline.Reflector.Phase == "WATCH" && st.Pipeline.Indexer == 1
			})
			r := st.Pipeline.Reflector
			require.NotEmpty(t, r.Requests, "%+v", r)
			stream := r.Requests[0]
			streamed := stream.Outcome == ""
			if streamed {
				// The stream from the latest state, with the one object and
				// its bookmark; no LIST, no plain WATCH.
				require.Len(t, r.Requests, 1, "%+v", r)
				assert.Equal(t, liveprobe.ProbedRequest{Verb: liveprobe.VerbStream, Objects: 1, Bookmark: stream.Bookmark}, stream)
				assert.Equal(t, []int{1, 0, 0}, []int{r.Streams, r.Lists, r.Watches}, "streams, lists, watches")
				assert.Equal(t, liveprobe.FetchedStream, r.Fetched)
				// The bookmark says the state is at least as new as the
				// object made before the informer started.
				assert.GreaterOrEqual(t, lvRV(t, stream.Bookmark), lvRV(t, listedRV))
			} else {
				require.Equal(t, "secrets", resource, "configmaps bypass the watch cache and must stream: %+v", r)
				// The fallback: the stream's 500, the classic first LIST,
				// the WATCH from its resourceVersion.
				require.Len(t, r.Requests, 3, "%+v", r)
				assert.Equal(t, liveprobe.ProbedRequest{Verb: liveprobe.VerbStream, Outcome: "ERROR InternalError"}, stream)
				assert.Equal(t, liveprobe.ProbedRequest{Verb: liveprobe.VerbList, ResourceVersion: "0", Objects: 1}, r.Requests[1])
				assert.Equal(t, liveprobe.VerbWatch, r.Requests[2].Verb)
				assert.Empty(t, r.Requests[2].Outcome)
				assert.GreaterOrEqual(t, lvRV(t, r.Requests[2].ResourceVersion), lvRV(t, listedRV))
				assert.Equal(t, []int{1, 1, 1}, []int{r.Streams, r.Lists, r.Watches}, "streams, lists, watches")
				assert.Equal(t, []any{liveprobe.FetchedList, 1}, []any{r.Fetched, r.Listed})
				t.Logf("secrets fell back to LIST: this cluster's etcd lacks RequestWatchProgress (%v)", r.Requests)
			}
			assert.Empty(t, r.LastError)

			// A change made while watching reaches the box as a watch event.
			watchedRV := create("watched-" + resource)
			// The reflector's resourceVersion moves when the event reaches
			// the queue, the cache a moment later: wait for both.
			st = lvWaitState(t, url, "the new object's event seen by the watch and cached", func(st liveview.State) bool {
				return st.Pipeline.Reflector.WatchEvents >= 1 && st.Pipeline.Reflector.ResourceVersion == watchedRV && st.Pipeline.Indexer == 2
			})
			assert.Equal(t, "WATCH", st.Pipeline.Reflector.Phase)
			// By the watch, not by a relist: an event the client cannot
			// decode is an ERROR event, and the reflector fetches the
			// whole state again.
			assert.Equal(t, r.Streams, st.Pipeline.Reflector.Streams, "%+v", st.Pipeline.Reflector.Requests)
			assert.Equal(t, r.Lists, st.Pipeline.Reflector.Lists, "%+v", st.Pipeline.Reflector.Requests)
			assert.Equal(t, r.WatchErrors, st.Pipeline.Reflector.WatchErrors, "%+v", st.Pipeline.Reflector.Requests)

			res, err := http.Get(url + "api/controls")
			require.NoError(t, err)
			defer res.Body.Close()
			var controls struct {
				Controls []liveview.Control `json:"controls"`
				None     string             `json:"none"`
			}
			require.NoError(t, json.NewDecoder(res.Body).Decode(&controls))
			assert.Empty(t, controls.Controls)
			assert.Contains(t, controls.None, "no controls on a real cluster")
		})
	}
}

func lvWaitState(t *testing.T, url, what string, cond func(liveview.State) bool) liveview.State {
	t.Helper()
	var last string // the last answer, or why there was none
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		res, err := http.Get(url + "api/state")
		if err != nil {
			last = err.Error()
			continue
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		last = string(b)
		var st liveview.State
		if err == nil && json.Unmarshal(b, &st) == nil && cond(st) {
			return st
		}
	}
	t.Fatalf("gave up after a minute waiting for %s; the last answer: %s", what, last)
	return liveview.State{}
}

func lvRV(t *testing.T, rv string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(rv, 10, 64)
	require.NoError(t, err, "resourceVersion %q", rv)
	return n
}
