//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/informer-anatomy/informer-anatomy/demo/demoproc/demoproctest"
	"github.com/informer-anatomy/informer-anatomy/internal/kube"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// The demo as a user runs it against their cluster: --generate makes
// ConfigMaps in a namespace of its own, every one is traced from
// ListAndWatch to the three handlers, and the namespace is gone afterwards.
func TestTraceDemoGenerateOnTheRealCluster(t *testing.T) {
	kubeconfig := os.Getenv("KUBECONFIG")
	require.NotEmpty(t, kubeconfig, `KUBECONFIG is not set: run with hack/test.sh, or after hack/local-cluster.sh up && eval "$(hack/local-cluster.sh env)"`)
	bin := demoproctest.Build(t)
	spansFile := filepath.Join(t.TempDir(), "spans.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--kubeconfig", kubeconfig, "--generate", "--out", spansFile)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "trace-demo --generate:\n%s", out)
	t.Logf("trace-demo output:\n%s", out)

	ns := regexp.MustCompile(`trace-demo-\d{5}`).FindString(string(out))
	require.NotEmpty(t, ns, "the demo names its namespace")
	assert.Contains(t, string(out), "deleted namespace "+ns)

	f, err := os.Open(spansFile)
	require.NoError(t, err)
	defer f.Close()
	spans, err := spancheck.ReadStdoutTrace(f)
	require.NoError(t, err)
	reached := map[string][]string{}
	listeners := map[string]map[string]bool{}
	for _, c := range spancheck.NewIndex(spans).HandlerChains() {
		require.NoError(t, c.Check())
		reached[c.Key()] = append(reached[c.Key()], c.Root().Attr(tracing.KeyEventType))
		if listeners[c.Key()] == nil {
			listeners[c.Key()] = map[string]bool{}
		}
		listeners[c.Key()][c.Spans[0].Attr(tracing.KeyListener)] = true
	}
	for i := range 5 {
		key := ns + "/gen-" + string(rune('0'+i))
		assert.Contains(t, reached[key], "ADDED", key)
		assert.Contains(t, reached[key], "MODIFIED", key)
		if i < 4 {
			assert.Contains(t, reached[key], "DELETED", key)
		}
		assert.Len(t, listeners[key], 3, "%s reached every handler: %v", key, listeners[key])
	}
	assert.True(t, slices.ContainsFunc(spans, func(s spancheck.Span) bool { return s.Name == tracing.SpanWatch }), "a Reflector.watch span")
	// Every object's root reached HandleDeltas or, still queued when the
	// demo stopped the informer, ends with a dropped queue wait span.
	for _, rc := range spancheck.NewIndex(spans).CheckRoots() {
		assert.NoError(t, rc.Err)
	}
	assert.Contains(t, string(out), "━━ "+ns+"/gen-0 — ListAndWatch watch ADDED")
	assert.Contains(t, string(out), "━━ "+ns+"/gen-0 — ListAndWatch watch DELETED", "the waterfall shows each kind of event first")
	assert.Contains(t, string(out), "calls trace back to their root")

	// Cleaned up: the namespace is gone or on its way.
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	require.NoError(t, err)
	client, err := kube.RESTClientFor(cfg, corev1.SchemeGroupVersion)
	require.NoError(t, err)
	got := &corev1.Namespace{}
	err = client.Get().Resource("namespaces").Name(ns).Do(context.Background()).Into(got)
	if err == nil {
		assert.NotNil(t, got.DeletionTimestamp, "namespace %s is being deleted", ns)
	} else {
		assert.True(t, apierrors.IsNotFound(err), "%v", err)
	}
}

// Pods of the real cluster, watched the way the README shows: what is
// there is streamed (the informer's first request) and traced to the
// handlers; a forbidden user is told so.
func TestTraceDemoWatchesPodsOnTheRealCluster(t *testing.T) {
	kubeconfig := os.Getenv("KUBECONFIG")
	require.NotEmpty(t, kubeconfig)
	c := newCluster(t)
	bin := demoproctest.Build(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// configmaps: the local cluster runs no controllers, so it has no pods.
	c.create("watched")
	out, err := exec.CommandContext(ctx, bin, "--kubeconfig", kubeconfig, "--resource", "v1/configmaps",
		"--namespace", c.ns, "--duration", "2s", "--exporter", "none").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "━━ "+c.ns+"/watched — ListAndWatch watchlist LISTED")
	assert.Regexp(t, `(\d+) of (\d+) handler calls trace back`, string(out))
}

// --queue on a real cluster: the default is the RealFIFO, as client-go's
// (the streamed state is one RealFIFO.ReplacedAll entry); --queue deltafifo runs the
// same typed informer on the DeltaFIFO (DeltaFIFO.queued, no RealFIFO span).
func TestTraceDemoQueueOnTheRealCluster(t *testing.T) {
	kubeconfig := os.Getenv("KUBECONFIG")
	require.NotEmpty(t, kubeconfig)
	c := newCluster(t)
	bin := demoproctest.Build(t)
	c.create("queued")
	for _, q := range []struct{ flag, want, not string }{
		{"realfifo", tracing.SpanRealFIFOReplacedAll, tracing.SpanQueued},
		{"deltafifo", tracing.SpanQueued, tracing.SpanRealFIFOQueued},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		spansFile := filepath.Join(t.TempDir(), "spans.json")
		out, err := exec.CommandContext(ctx, bin, "--kubeconfig", kubeconfig, "--resource", "configmaps",
			"--namespace", c.ns, "--duration", "2s", "--queue", q.flag, "--out", spansFile).CombinedOutput()
		cancel()
		require.NoError(t, err, "%s", out)
		assert.Contains(t, string(out), "; queue "+q.flag)
		f, err := os.Open(spansFile)
		require.NoError(t, err)
		spans, err := spancheck.ReadStdoutTrace(f)
		f.Close()
		require.NoError(t, err)
		names := map[string]bool{}
		for _, s := range spans {
			names[s.Name] = true
		}
		assert.True(t, names[q.want], "--queue %s: no %s span", q.flag, q.want)
		assert.False(t, names[q.not], "--queue %s: a %s span", q.flag, q.not)
		for _, rc := range spancheck.NewIndex(spans).CheckRoots() {
			assert.NoError(t, rc.Err)
		}
	}
}

// On the real API server, what a user gets wrong is told in one line, with
// exit code 1, within seconds: RBAC, an unknown resource, an untrusted
// certificate.
func TestTraceDemoExplainsRealClusterProblems(t *testing.T) {
	kubeconfig := os.Getenv("KUBECONFIG")
	require.NotEmpty(t, kubeconfig)
	bin := demoproctest.Build(t)

	// A copy of the kubeconfig without the certificate authority: the
	// server's self-signed certificate is then not trusted.
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	require.NoError(t, err)
	for _, c := range raw.Clusters {
		c.CertificateAuthority, c.CertificateAuthorityData = "", nil
	}
	noCA := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*raw, noCA))

	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"rbac", []string{"--kubeconfig", kubeconfig, "--context", "nobody", "--namespace", "default"},
			[]string{"(context nobody) does not allow you to list pods in namespace default", "kubectl auth can-i list pods -n default"}},
		{"unknown resource", []string{"--kubeconfig", kubeconfig, "--resource", "example.com/v1/widgets"},
			[]string{"unknown resource: the API server at", "has no widgets in example.com/v1"}},
		{"untrusted certificate", []string{"--kubeconfig", noCA},
			[]string{"TLS: the certificate of the API server at"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			cmd := exec.CommandContext(ctx, bin, append(c.args, "--exporter", "none")...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "stderr: %s", stderr.String())
			assert.Equal(t, 1, exit.ExitCode())
			for _, w := range c.want {
				assert.Contains(t, stderr.String(), w)
			}
			assert.Less(t, time.Since(start), 15*time.Second)
		})
	}
}
