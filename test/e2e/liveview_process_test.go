//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informer-anatomy/informer-anatomy/examples/clientgo-controller/controller"
	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
)

// A controller written against client-go (the client-go example, built and
// run as its user runs it, with --live-view-addr) against kube-apiserver
// serves its live view: /api/state names its ConfigMap informer, its
// handler by its type's name and its queue, "configmap-status", and counts
// the watched ConfigMap this test creates, through the handler to the
// reconcile.
func TestClientGoControllerServesItsLiveViewOnARealAPIServer(t *testing.T) {
	kubeconfig, client, ns := clientsetNamespace(t, "e2e-liveview")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	bin := filepath.Join(t.TempDir(), "clientgo-controller")
	build := exec.Command("go", "build", "-o", bin, "./examples/clientgo-controller")
	build.Dir = repoRoot()
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build:\n%s", out)

	cmd := exec.CommandContext(ctx, bin, "--kubeconfig", kubeconfig, "--namespace", ns, "--exporter", "none",
		"--live-view-addr", "127.0.0.1:0", "--workers", "1")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	cmd.Stdout = io.Discard
	require.NoError(t, cmd.Start())
	var (
		mu     sync.Mutex
		output strings.Builder
	)
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			output.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := regexp.MustCompile(`live view at (http://\S+)`).FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		mu.Lock()
		defer mu.Unlock()
		t.Logf("clientgo-controller output:\n%s", output.String())
	})
	var url string
	select {
	case url = <-urls:
	case <-ctx.Done():
		t.Fatal("the controller never printed its live view's URL")
	}

	_, err = client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app",
		Labels: map[string]string{controller.WatchLabel: "true"}}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{})
	require.NoError(t, err)

	state := func() livepage.Process {
		res, err := http.Get(url + "api/state")
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		var st livepage.ProcessState
		require.NoError(t, json.NewDecoder(res.Body).Decode(&st))
		return st.Process
	}
	var p livepage.Process
	deadline := time.Now().Add(time.Minute)
	for {
		p = state()
		if len(p.Informers) == 1 && p.Informers[0].Synced && len(p.Informers[0].Handlers) == 1 &&
			p.Informers[0].Handlers[0].Calls >= 2 && len(p.Queues) == 1 && p.Queues[0].Depth == 0 {
			// Two calls at least: the created ConfigMap and its status
			// (an unwatched ConfigMap: filtered, but a call all the same).
			break
		}
		require.False(t, time.Now().After(deadline), "the live view never showed the reconcile: %+v", p)
		time.Sleep(100 * time.Millisecond)
	}
	inf := p.Informers[0]
	assert.Equal(t, "*v1.ConfigMap", inf.Type)
	assert.True(t, inf.Started)
	assert.NotEmpty(t, inf.ResourceVersion)
	assert.GreaterOrEqual(t, inf.Cached, 2, "app and app-status")
	// The reflector's conversation: kube-apiserver streams the initial
	// state (WatchList), ending it with a bookmark; the same watch then
	// delivers the status ConfigMap the reconcile creates.
	r := inf.Reflector
	require.NotEmpty(t, r.Requests)
	assert.Equal(t, "STREAM", r.Requests[0].Verb)
	assert.NotEmpty(t, r.Requests[0].Bookmark, "the stream's initial-events-end bookmark")
	assert.Equal(t, []any{"stream", "WATCH", false}, []any{r.Fetched, r.Phase, r.Unprobed})
	assert.GreaterOrEqual(t, r.WatchEvents, 1, "app-status's ADDED at least (app may come in the stream)")
	assert.GreaterOrEqual(t, r.SinceEventMillis, int64(0))
	h := inf.Handlers[0]
	assert.Contains(t, h.Name, "FilteringResourceEventHandler", "the handler by its type's name")
	assert.True(t, h.Synced)
	assert.Equal(t, "configmap-status", p.Queues[0].Name)
	assert.Equal(t, "rate-limiting", p.Queues[0].Kind)
	assert.True(t, slices.ContainsFunc(p.Informers, func(i livepage.ProcessInformer) bool { return i.QueueKind == "realfifo" }))

	res, err := http.Post(url+"api/state", "text/plain", strings.NewReader("x"))
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, res.StatusCode, "read-only")
}
