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

	"github.com/informer-anatomy/informer-anatomy/internal/demoproc"
	"github.com/informer-anatomy/informer-anatomy/internal/liveview"
)

// The live view on a real cluster: the reflector box is the probe's, as on
// the embedded server (the first LIST, then a WATCH from the list's
// resourceVersion, then the watch's events), and there are no controls. Run
// for a typed resource (configmaps: the demo's own typed informer) and one
// the factory has no type for (secrets: an unstructured informer), in a
// namespace of this test's own.
func TestLiveViewOnTheRealClusterShowsTheReflector(t *testing.T) {
	kubeconfig := os.Getenv("KUBECONFIG")
	require.NotEmpty(t, kubeconfig, `KUBECONFIG is not set: run with hack/test.sh, or after hack/local-cluster.sh up && eval "$(hack/local-cluster.sh env)"`)
	c := newCluster(t)
	bin := demoproc.Build(t)
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

			p := demoproc.Start(t, time.Minute, bin, "--cluster", "--kubeconfig", kubeconfig,
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
			require.GreaterOrEqual(t, len(r.Requests), 2, "%+v", r)
			list, watch := r.Requests[0], r.Requests[1]
			assert.Equal(t, "LIST", list.Verb)
			assert.Empty(t, list.Outcome)
			assert.Equal(t, "WATCH", watch.Verb)
			assert.Empty(t, watch.Outcome)
			assert.Equal(t, 1, r.Lists)
			assert.Empty(t, r.LastError)
			// The WATCH starts from the LIST's resourceVersion, which is at
			// least the listed object's.
			assert.GreaterOrEqual(t, lvRV(t, watch.ResourceVersion), lvRV(t, listedRV))

			// A change made while watching reaches the box as a watch event.
			watchedRV := create("watched-" + resource)
			st = lvWaitState(t, url, "the new object's event seen by the watch", func(st liveview.State) bool {
				return st.Pipeline.Reflector.WatchEvents >= 1 && st.Pipeline.Reflector.ResourceVersion == watchedRV
			})
			assert.Equal(t, 2, st.Pipeline.Indexer)
			assert.Equal(t, "WATCH", st.Pipeline.Reflector.Phase)
			// By the watch, not by a relist: an event the client cannot
			// decode is an ERROR event, and the reflector LISTs again.
			assert.Equal(t, 1, st.Pipeline.Reflector.Lists, "%+v", st.Pipeline.Reflector.Requests)
			assert.Zero(t, st.Pipeline.Reflector.WatchErrors, "%+v", st.Pipeline.Reflector.Requests)

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
