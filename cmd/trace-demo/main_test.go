package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

type runResult struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

func runDemo(t *testing.T, ctx context.Context, args ...string) runResult {
	t.Helper()
	var out, errb bytes.Buffer
	start := time.Now()
	code := run(ctx, args, &out, &errb)
	return runResult{code, out.String(), errb.String(), time.Since(start)}
}

// The default run, as a newcomer starts it: exit 0, a waterfall per lesson,
// and in the exported file a complete contract chain for every handler call
// and for every object the script created.
func TestDefaultRunTracesEveryObjectToItsHandlers(t *testing.T) {
	out := filepath.Join(t.TempDir(), "spans.json")
	r := runDemo(t, context.Background(), "--out", out)
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
	t.Logf("default run took %v", r.took)

	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	spans, err := spancheck.ReadStdoutTrace(f)
	require.NoError(t, err)
	// Nothing lost between the collector and the exporter: the count the
	// demo printed is the count in the file.
	assert.Contains(t, r.stdout, fmt.Sprintf("\n%d spans written to %s", len(spans), out))

	ix := spancheck.NewIndex(spans)
	chains := ix.HandlerChains()
	require.NotEmpty(t, chains)
	// Per key: which root event types reached a handler, through a chain
	// the contract accepts.
	reached := map[string]map[string]bool{}
	for _, c := range chains {
		require.NoError(t, c.Check())
		ev := c.Root().Attr(tracing.KeyEventType)
		if c.Root().Name == tracing.SpanAddEventHandle {
			ev = tracing.SpanAddEventHandle
		}
		if reached[c.Key()] == nil {
			reached[c.Key()] = map[string]bool{}
		}
		reached[c.Key()][ev] = true
	}
	created := []string{"demo/web-1", "demo/web-2", "demo/web-coalesced", "demo/busy", "demo/doomed"}
	for i := range fillerPods {
		created = append(created, fmt.Sprintf("demo/batch-%03d", i))
	}
	for _, k := range created {
		assert.NotEmpty(t, reached[k], "no handler call traced back to a root for %s", k)
	}
	// Each lesson left its mark.
	want := map[string][]string{
		"demo/web-1":    {"LISTED", "MODIFIED", tracing.SpanAddEventHandle, "RESYNC"},
		"demo/web-2":    {"ADDED", "DELETED"},
		"demo/doomed":   {"ADDED", "TOMBSTONE"},
		"demo/busy":     {"ADDED", "MODIFIED"},
		"demo/batch-07": nil,
	}
	for k, evs := range want {
		for _, ev := range evs {
			assert.True(t, reached[k][ev], "%s: no %s trace reached a handler; got %v", k, ev, reached[k])
		}
	}
	// Coalescing: the listed object and its two watch updates popped
	// together, each delta in its own trace, linked to the others.
	var coalesced []*spancheck.Span
	for i := range spans {
		s := &spans[i]
		if s.Name == tracing.SpanHandleDeltas && s.Attr(tracing.KeyObjectKey) == "demo/web-coalesced" {
			coalesced = append(coalesced, s)
		}
	}
	require.NotEmpty(t, coalesced)
	// Three when both watch events beat the pop loop, two when only the
	// first did (a race the demo cannot rule out; see fillerPods). Either
	// way each HandleDeltas links to the other deltas' roots.
	n, err := strconv.Atoi(coalesced[0].Attr(tracing.KeyDeltasCount))
	require.NoError(t, err)
	t.Logf("%d deltas of demo/web-coalesced popped together", n)
	assert.GreaterOrEqual(t, n, 2, "deltas popped together for demo/web-coalesced")
	assert.Len(t, coalesced[0].Links, n-1)
	assert.Contains(t, r.stdout, fmt.Sprintf("· coalesce: %d deltas of demo/web-coalesced were popped together", n))

	// What the user sees: a waterfall per lesson, every one found, and the summary.
	for _, step := range append([]string{"start"}, scenarioNames...) {
		assert.Contains(t, r.stdout, "━━ ["+step+"] ", "waterfall of %s", step)
	}
	assert.NotContains(t, r.stdout, "no such trace was recorded")
	assert.Contains(t, r.stdout, fmt.Sprintf("HandleDeltas  Updated, %d popped together", n))
	assert.Contains(t, r.stdout, "└─ OnDelete")
	assert.Contains(t, r.stdout, "━━ Summary")
	assert.Contains(t, r.stdout, fmt.Sprintf("%d of %d calls trace back to their root", len(chains), len(chains)))
	assert.Empty(t, r.stderr)
}

// Each scenario runs alone and finds the trace it promises to draw.
func TestEachScenarioRunsAlone(t *testing.T) {
	for _, s := range scenarioNames {
		t.Run(s, func(t *testing.T) {
			r := runDemo(t, context.Background(), "--scenario", s, "--exporter", "none")
			require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
			assert.Contains(t, r.stdout, "▶ "+s+": ")
			assert.Contains(t, r.stdout, "━━ ["+s+"] ")
			assert.NotContains(t, r.stdout, "no such trace was recorded")
			assert.Contains(t, r.stdout, "not exported (--exporter none)")
		})
	}
}

func TestQuietPrintsOnlyWhereTheSpansWent(t *testing.T) {
	r := runDemo(t, context.Background(), "--scenario", "basic", "--quiet", "--out", "-")
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "━━")
	assert.NotContains(t, r.stdout, "▶")
	spans, err := spancheck.ReadStdoutTrace(strings.NewReader(r.stdout[:strings.LastIndex(r.stdout, "}")+1]))
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(r.stdout, fmt.Sprintf("%d spans written to stdout\n", len(spans))), r.stdout[len(r.stdout)-80:])
}

func TestBadFlagsSayWhatToDo(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--scenario", "nope"}, `--scenario "nope": want all or one of basic`},
		{[]string{"--generate"}, "--generate needs a cluster: add --cluster"},
		{[]string{"--namespace", "x"}, "--namespace needs a cluster"},
		{[]string{"--cluster", "--scenario", "basic"}, "--scenario runs on the embedded server only"},
		{[]string{"--exporter", "zipkin"}, `--exporter "zipkin": want stdout, otlp or none`},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		r := runDemo(t, context.Background(), c.args...)
		assert.Equal(t, 2, r.code, "%v", c.args)
		assert.Contains(t, r.stderr, c.want, "%v", c.args)
	}
	r := runDemo(t, context.Background(), "--help")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stderr, "go run ./cmd/trace-demo --scenario relist")
}

// kubeconfig writes a kubeconfig for server and returns its path.
func kubeconfig(t *testing.T, server string, insecure bool) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: insecure}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "ctx"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, path))
	return path
}

func startServer(t *testing.T) *apiserver.Server {
	t.Helper()
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	return srv
}

// A cluster the informer cannot use fails at once, with one line that says
// why and what to do, and a non-zero exit: never a silent retry loop.
func TestClusterProblemsFailFastWithAReason(t *testing.T) {
	// A port nobody listens on.
	dead := startServer(t)
	deadURL := dead.URL
	dead.Stop()

	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsSrv.Close)

	forbiddenList := startServer(t)
	forbiddenList.Inject(apiserver.Fault{Verb: "list", Status: http.StatusForbidden})
	forbiddenWatch := startServer(t)
	forbiddenWatch.Inject(apiserver.Fault{Verb: "watch", Status: http.StatusForbidden})
	unauthorized := startServer(t)
	unauthorized.Inject(apiserver.Fault{Verb: "list", Status: http.StatusUnauthorized})
	fine := startServer(t)

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unreachable", []string{"--kubeconfig", kubeconfig(t, deadURL, false)}, "cannot reach the API server at " + deadURL},
		{"tls", []string{"--kubeconfig", kubeconfig(t, tlsSrv.URL, false)}, "TLS: the certificate of the API server"},
		{"forbidden list", []string{"--kubeconfig", kubeconfig(t, forbiddenList.URL, false), "--namespace", "team-a"},
			"forbidden: the API server at " + forbiddenList.URL + " (context ctx) does not allow you to list pods in namespace team-a"},
		{"forbidden watch", []string{"--kubeconfig", kubeconfig(t, forbiddenWatch.URL, false)}, "forbidden: the API server at " + forbiddenWatch.URL + " (context ctx) does not allow you to watch pods in all namespaces"},
		{"unauthorized", []string{"--kubeconfig", kubeconfig(t, unauthorized.URL, false)}, "unauthorized: the API server at"},
		{"unknown resource", []string{"--kubeconfig", kubeconfig(t, fine.URL, false), "--resource", "example.com/v1/widgets"}, "unknown resource: the API server at"},
		{"unknown short name", []string{"--kubeconfig", kubeconfig(t, fine.URL, false), "--resource", "widgets"}, `--resource "widgets": not a name the demo knows`},
		{"missing kubeconfig", []string{"--kubeconfig", filepath.Join(t.TempDir(), "nope")}, "reading the kubeconfig"},
		{"generate with another resource", []string{"--kubeconfig", kubeconfig(t, fine.URL, false), "--generate", "--resource", "pods"}, "--generate makes ConfigMaps"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runDemo(t, context.Background(), append(c.args, "--exporter", "none")...)
			assert.Equal(t, 1, r.code, r.stdout)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			assert.Contains(t, lines[0], "trace-demo: "+c.want)
			assert.Len(t, lines, 1, "one line, and nothing about spans when none were made")
			assert.Less(t, r.took, preflightTimeout, "a clear error within seconds")
		})
	}
}

// Against a server reached by kubeconfig (here the embedded one, standing
// in for a cluster), objects changed while watching are traced and drawn.
func TestClusterModeTracesWatchedObjects(t *testing.T) {
	srv := startServer(t)
	_, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "listed"}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := filepath.Join(t.TempDir(), "spans.json")
	synced := make(chan store.Store, 1)
	testHookSynced = func(s store.Store) { synced <- s }
	t.Cleanup(func() { testHookSynced = nil })
	done := make(chan runResult)
	go func() {
		done <- runDemo(t, ctx, "--kubeconfig", kubeconfig(t, srv.URL, false), "--namespace", "prod", "--out", out)
	}()

	// Once the demo watches, change objects; then stop it as Ctrl-C would.
	// The demo lets its handlers catch up with the cache before it stops,
	// but an event still on the wire is not in the cache yet: wait for the
	// last one to be there.
	cache := <-synced
	for i := range 3 {
		_, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "p" + strconv.Itoa(i)}})
		require.NoError(t, err)
	}
	require.NoError(t, srv.Delete(apiserver.Pods, "prod", "p0"))
	_, err = srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "last"}})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, ok, _ := cache.GetByKey("prod/last")
		return ok
	}, 10*time.Second, time.Millisecond)
	cancel()
	r := <-done
	require.Equal(t, 0, r.code, r.stderr)
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	spans, err := spancheck.ReadStdoutTrace(f)
	require.NoError(t, err)
	keys := map[string][]string{}
	for _, c := range spancheck.NewIndex(spans).HandlerChains() {
		require.NoError(t, c.Check())
		keys[c.Key()] = append(keys[c.Key()], c.Root().Attr(tracing.KeyEventType))
	}
	for _, k := range []string{"prod/listed", "prod/p1", "prod/p2"} {
		assert.NotEmpty(t, keys[k], k)
	}
	assert.True(t, slices.Contains(keys["prod/p0"], "DELETED"), "%v", keys["prod/p0"])
	assert.Contains(t, r.stdout, "━━ prod/p0 — ListAndWatch watch ADDED")
	assert.Contains(t, r.stdout, "cluster "+srv.URL+" (context ctx): pods in namespace prod")
}
