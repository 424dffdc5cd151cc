package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	"github.com/informer-anatomy/informer-anatomy/demo/lessons"
	"github.com/informer-anatomy/informer-anatomy/demo/terminal"
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
	return runDemoWith(t, hooks{}, ctx, args...)
}

// testBackoff is the reflector pacing of the tests' embedded runs: the
// default's shape (doubling, full jitter, a cap) at a fortieth of its
// delays. With client-go's 800ms doubling, a run of the lesson script
// spent most of its time waiting before the relist and fallback lessons'
// cycles (several seconds each, growing with every run in a process).
var testBackoff = reflector.Backoff{Duration: 20 * time.Millisecond, Factor: 2, Jitter: 1, Steps: 5, Cap: 640 * time.Millisecond}

// fastBackoff is h with testBackoff, unless h sets a pacing of its own.
func fastBackoff(h hooks) hooks {
	if h.backoff == nil {
		b := testBackoff
		h.backoff = &b
	}
	return h
}

// runDemoWith is runDemo with hooks into the run.
func runDemoWith(t *testing.T, h hooks, ctx context.Context, args ...string) runResult {
	t.Helper()
	var out, errb bytes.Buffer
	start := time.Now()
	code := runWith(ctx, args, &out, &errb, fastBackoff(h))
	return runResult{code, out.String(), errb.String(), time.Since(start)}
}

// The whole run (--verbose): exit 0, a waterfall per lesson, and in the
// exported file a complete contract chain for every handler call and for
// every object the script created.
func TestVerboseRunTracesEveryObjectToItsHandlers(t *testing.T) {
	v := verboseRun(t)
	r, out := v.r, v.out
	t.Logf("the verbose run took %v", r.took)

	spans := readSpans(t, out)
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
	created := []string{"demo/web-1", "demo/web-2", "lessons/web-coalesced", "demo/busy", "demo/doomed", "lessons/order-a", "lessons/order-c"}
	for _, k := range created {
		assert.NotEmpty(t, reached[k], "no handler call traced back to a root for %s", k)
	}
	// Each lesson left its mark.
	want := map[string][]string{
		"demo/web-1":            {"LISTED", "MODIFIED", tracing.SpanAddEventHandle, "RESYNC"},
		"demo/web-2":            {"ADDED", "DELETED"},
		"demo/doomed":           {"ADDED", "TOMBSTONE"},
		"demo/busy":             {"ADDED", "MODIFIED"},
		"lessons/web-coalesced": {"LISTED", "MODIFIED"},
		"lessons/order-a":       {"LISTED", "MODIFIED"},
		"lessons/order-b":       {"LISTED", "MODIFIED", "DELETED"},
	}
	for k, evs := range want {
		for _, ev := range evs {
			assert.True(t, reached[k][ev], "%s: no %s trace reached a handler; got %v", k, ev, reached[k])
		}
	}
	// Coalescing, on the coalesce lesson's own DeltaFIFO informer: the
	// listed object and its two watch updates popped together, each delta
	// in its own trace, linked to the others.
	var coalesced []*spancheck.Span
	for i := range spans {
		s := &spans[i]
		if s.Name == tracing.SpanHandleDeltas && s.Attr(tracing.KeyObjectKey) == "lessons/web-coalesced" && s.Attr(tracing.KeyInformerName) == "pods-coalesce" {
			coalesced = append(coalesced, s)
		}
	}
	require.NotEmpty(t, coalesced)
	// Three, on every run: the lesson's informer pops nothing until both
	// watch events are queued (popHold). Each HandleDeltas links to the
	// other deltas' roots, and the line says what the spans say.
	n, most := 0, coalesced[0]
	for _, s := range coalesced {
		k, err := strconv.Atoi(s.Attr(tracing.KeyDeltasCount))
		require.NoError(t, err)
		if k > n {
			n, most = k, s
		}
	}
	require.Equal(t, 3, n, "deltas of lessons/web-coalesced popped together")
	assert.Len(t, most.Links, n-1)
	assert.Contains(t, r.stdout, "· coalesce (on a DeltaFIFO informer, whatever --queue says): 3 deltas of lessons/web-coalesced were popped together\n")

	// What the user sees: a waterfall per lesson, every one found, and the summary.
	for _, step := range append([]string{"start"}, lessons.Names()...) {
		assert.Contains(t, r.stdout, "━━ ["+step+"] ", "waterfall of %s", step)
	}
	assert.NotContains(t, r.stdout, "no such trace was recorded")
	assert.Contains(t, r.stdout, "HandleDeltas  Updated, 3 popped together")
	assert.Contains(t, r.stdout, "└─ OnDelete")
	assert.Contains(t, r.stdout, "queue realfifo", "the RealFIFO is the default, as in client-go")
	assert.Contains(t, r.stdout, "RealFIFO.queued  Updated")
	assert.Contains(t, r.stdout, "root links to RealFIFO.ReplacedAll: its streamed state as one queue entry")
	assert.Contains(t, r.stdout, "root links to RealFIFO.ReplacedAll: its LIST as one queue entry", "the fallback lesson's LIST")
	assert.Contains(t, r.stdout, "API server (state, writes)", "--verbose prints the order lesson's columns")
	assert.Contains(t, r.stdout, "━━ Summary")
	assert.Contains(t, r.stdout, fmt.Sprintf("%d of %d handler calls trace back to their root", len(chains), len(chains)))
	for _, rc := range ix.CheckRoots() {
		assert.NoError(t, rc.Err)
	}
	assert.Empty(t, r.stderr)
}

// Each scenario runs alone and finds the trace it promises to draw. (The
// runs are shared with the tests of single lessons; the default run's test
// checks what a run without --out says about its spans.)
func TestEachScenarioRunsAlone(t *testing.T) {
	for _, s := range lessons.Names() {
		t.Run(s, func(t *testing.T) {
			run := scenarioRun(t, s)
			r := run.r
			assert.Contains(t, r.stdout, "▶ "+s+": ")
			assert.Contains(t, r.stdout, "━━ ["+s+"] ")
			assert.NotContains(t, r.stdout, "no such trace was recorded")
			assert.Contains(t, r.stdout, " spans written to "+run.out)
			assert.Empty(t, run.rep.Broken, "every trace keeps the span contract")
		})
	}
}

// --quiet --out - is for a pipe: standard output carries the JSON and
// nothing else, so a reader of it parses every byte; where the spans went
// is said on stderr.
func TestQuietOutDashPrintsOnlyTheJSON(t *testing.T) {
	r := runDemo(t, context.Background(), "--scenario", "basic", "--quiet", "--out", "-")
	require.Equal(t, 0, r.code, r.stderr)
	spans, err := spancheck.ReadStdoutTrace(strings.NewReader(r.stdout))
	require.NoError(t, err, "stdout must be nothing but stdouttrace JSON")
	require.NotEmpty(t, spans)
	assert.Equal(t, fmt.Sprintf("%d spans written to stdout\n", len(spans)), r.stderr)
}

// The waterfall and the JSON cannot share standard output: the
// combination is refused with what to do instead.
func TestOutDashWithoutQuietIsRefused(t *testing.T) {
	r := runDemo(t, context.Background(), "--scenario", "basic", "--out", "-")
	assert.Equal(t, 2, r.code)
	assert.Empty(t, r.stdout, "no JSON mixed into anything")
	assert.Equal(t, "trace-demo: --out - writes the spans as JSON to standard output, where the waterfall goes too: add --quiet, or give a file\n", r.stderr)
}

// A disk that is full (or any write error) is one line, not one per span.
func TestOutToAFullDeviceIsOneErrorLine(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Fatalf("this test needs /dev/full (Linux): %v", err)
	}
	r := runDemo(t, context.Background(), "--scenario", "basic", "--quiet", "--out", "/dev/full")
	assert.Equal(t, 1, r.code)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	require.Len(t, lines, 1, r.stderr)
	assert.Contains(t, lines[0], "trace-demo: exporting spans failed:")
	assert.Contains(t, lines[0], "no space left on device")
}

// The first run, as a newcomer starts it, fits about one screen and leaves
// no file behind: the spans are written only when --out asks for them, and
// the last lines say how.
func TestDefaultRunFitsOneScreenAndWritesNoFile(t *testing.T) {
	run := defaultRun(t)
	r := run.r
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	assert.LessOrEqual(t, len(lines), 50, "one screen:\n%s", r.stdout)
	assert.Empty(t, run.left, "no file written unasked")
	assert.Contains(t, r.stdout, "none written: --out spans.json keeps them")
	assert.Contains(t, r.stdout, "--verbose draws every lesson's waterfall")
	for _, s := range lessons.Names() {
		assert.Contains(t, r.stdout, "▶ "+s+": ", "every lesson is still named")
	}
	assert.Equal(t, 1, strings.Count(r.stdout, "━━ ["), "one waterfall")
	assert.Contains(t, r.stdout, "━━ Summary: ")
	// The headline's longest wait is the lessons' informer's, not a wait
	// in the coalesce or order lesson's own informer, whose pop loop is
	// held by design (popHold).
	assert.Regexp(t, `\n   longest wait in the informer pods: [0-9.]+ms, \S+ of demo/`, r.stdout)
	assert.Empty(t, r.stderr)
}

// The default run, on the RealFIFO, keeps the span contract in every run.
// After the resync lesson the informer may stop with resync entries still
// queued; each must end with a dropped queue wait span, and every other
// root must reach HandleDeltas and its handlers, the per-object roots of
// an atomic relist or resync too.
//
// Each run is checked on the spans it analysed itself (hooks.report). A
// contract break from an unlucky interleaving shows only now and then, so
// the soak (INFORMER_ANATOMY_SOAK=1, once in hack/test.sh, without -race)
// makes twenty default runs of its own, two at a time (a run is mostly
// waiting: the resync period, the lessons' informers). Otherwise the two
// whole runs other tests make anyway (the default one and --verbose)
// are checked. The default run writes no span file; the file's own round
// trip, with the same checks, is TestVerboseRunTracesEveryObjectToItsHandlers's.
func TestDefaultRunsKeepTheContract(t *testing.T) {
	var reports []*terminal.Report
	if soak() {
		reports = runsKeepTheContract(t, 20)
	} else {
		reports = []*terminal.Report{defaultRun(t).rep, verboseRun(t).rep}
		for i, rep := range reports {
			checkContract(t, i+1, rep)
		}
	}
	for i, rep := range reports {
		// The main informer ("pods") really ran on the RealFIFO: its
		// initial list was one ReplacedAll entry, and its watch events
		// waited in RealFIFO.queued.
		entries, queued := 0, 0
		for j := range rep.Spans {
			s := &rep.Spans[j]
			if s.Attr(tracing.KeyInformerName) != "pods" {
				continue
			}
			switch s.Name {
			case tracing.SpanRealFIFOReplacedAll:
				entries++
			case tracing.SpanRealFIFOQueued:
				queued++
			case tracing.SpanQueued:
				t.Fatalf("run %d: the default informer used a DeltaFIFO", i+1)
			}
		}
		require.GreaterOrEqual(t, entries, 3, "run %d: the initial state, the relist and the fallback's LIST, each one RealFIFO.ReplacedAll", i+1)
		require.NotZero(t, queued, "run %d", i+1)
	}
}

// The same contract on the DeltaFIFO (client-go's informer queue up to 1.32):
// --queue deltafifo still runs every lesson and keeps every trace whole
// (one run; four in the soak: the default is the one users start).
func TestDeltaFIFORunsKeepTheContract(t *testing.T) {
	runs := 1
	if soak() {
		runs = 4
	}
	for i, rep := range runsKeepTheContract(t, runs, "--queue", "deltafifo") {
		n := 0
		for j := range rep.Spans {
			s := &rep.Spans[j]
			if s.Attr(tracing.KeyInformerName) == "pods" {
				require.NotEqual(t, tracing.SpanRealFIFOQueued, s.Name, "run %d: --queue deltafifo ran on the RealFIFO", i+1)
				if s.Name == tracing.SpanQueued {
					n++
				}
			}
		}
		require.NotZero(t, n, "run %d: no DeltaFIFO.queued span on the main informer", i+1)
	}
}

// runsKeepTheContract runs the demo (--quiet, plus args) runs times, two at
// a time, and requires of each run's own analysed spans (hooks.report)
// what the span contract says (checkContract); it returns the reports.
func runsKeepTheContract(t *testing.T, runs int, args ...string) []*terminal.Report {
	t.Helper()
	var mu sync.Mutex
	var reports []*terminal.Report
	var h hooks
	h.report = func(_ *options, r *terminal.Report) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, r)
	}
	const together = 2
	results := make([]runResult, runs)
	sem := make(chan struct{}, together)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = runDemoWith(t, h, context.Background(), append([]string{"--quiet"}, args...)...)
		})
	}
	wg.Wait()
	for i, r := range results {
		require.Equal(t, 0, r.code, "run %d: %s", i+1, r.stderr)
		require.Empty(t, r.stderr, "run %d", i+1)
	}
	require.Len(t, reports, runs)
	dropped := 0
	for i, rep := range reports {
		dropped += checkContract(t, i+1, rep)
	}
	t.Logf("%d deltas dropped at stop over %d runs", dropped, runs)
	return reports
}

// checkContract requires of a whole run's analysed spans what the span
// contract says: no broken trace, a root for every listed pod, every
// root's and every handler chain's rules, the chains of deltas dropped at
// stop too. It returns how many roots were dropped at stop.
func checkContract(t *testing.T, run int, rep *terminal.Report) (dropped int) {
	t.Helper()
	require.Empty(t, rep.Broken, "run %d", run)
	roots := rep.Index.CheckRoots()
	require.NotEmpty(t, roots, "run %d", run)
	for _, rc := range roots {
		require.NoError(t, rc.Err, "run %d", run)
		if rc.Dropped {
			dropped++
		}
	}
	require.NotEmpty(t, rep.Chains, "run %d", run)
	for _, c := range rep.Chains {
		require.NoError(t, c.Check(), "run %d", run)
	}
	for _, c := range rep.Index.DroppedChains() {
		require.NoError(t, c.Check(), "run %d", run)
	}
	t.Logf("run %d: %d roots, %d dropped at stop", run, len(roots), rep.Dropped)
	return dropped
}

func TestBadFlagsSayWhatToDo(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--scenario", "nope"}, `--scenario "nope": want all or one of basic`},
		{[]string{"--generate"}, "--generate needs a cluster: add --cluster"},
		{[]string{"--namespace", "x"}, "--namespace needs a cluster"},
		{[]string{"--sync-timeout", "5m"}, "--sync-timeout needs a cluster"},
		{[]string{"--cluster", "--sync-timeout", "-1s"}, "--sync-timeout cannot be negative"},
		{[]string{"--cluster", "--scenario", "basic"}, "--scenario is for the embedded server only"},
		{[]string{"--queue", "fifo"}, `--queue "fifo": want realfifo or deltafifo`},
		{[]string{"--cluster", "--queue", "fifo"}, `--queue "fifo": want realfifo or deltafifo`},
		{[]string{"--exporter", "zipkin"}, `--exporter "zipkin": want stdout, otlp or none`},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--duration", "5s"}, "--duration is for --cluster runs: the embedded run follows its script and stops by itself"},
		{[]string{"--exporter", "stdout"}, "--exporter stdout writes to --out: give a file"},
		{[]string{"--exporter", "otlp", "--out", "x.json"}, "--out is for stdouttrace JSON: drop --exporter otlp"},
		{[]string{"--quiet", "--verbose"}, "--quiet and --verbose contradict each other"},
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
	var h hooks
	h.synced = func(s store.Store) { synced <- s }
	done := make(chan runResult)
	go func() {
		done <- runDemoWith(t, h, ctx, "--kubeconfig", kubeconfig(t, srv.URL, false), "--namespace", "prod", "--out", out)
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
	spans := readSpans(t, out)
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

// proxy puts handler in front of srv: a stand-in for an API server that
// behaves as the test needs (RBAC, a hang) on top of the embedded one.
func proxy(t *testing.T, srv *apiserver.Server, intercept func(w http.ResponseWriter, r *http.Request) bool) string {
	t.Helper()
	target, err := url.Parse(srv.URL)
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1 // watch events as they come
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !intercept(w, r) {
			rp.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(p.Close)
	return p.URL
}

// A cluster that cannot stream (its WatchList feature off), whose RBAC lets
// the preflight's small LIST through but forbids the informer's own LIST,
// the one it falls back to: the demo says it is the LIST that is
// forbidden, with a `kubectl auth can-i list` hint, and stops at once
// instead of waiting for a sync that cannot come.
func TestForbiddenListAfterThePreflightIsALISTFailure(t *testing.T) {
	srv := startServer(t)
	srv.SetWatchListEnabled(false)
	u := proxy(t, srv, func(w http.ResponseWriter, r *http.Request) bool {
		q := r.URL.Query()
		if r.Method != http.MethodGet || q.Get("watch") == "true" || q.Get("limit") == "1" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,` +
			`"message":"pods is forbidden: User \"t\" cannot list resource \"pods\" in API group \"\" at the cluster scope"}`))
		return true
	})
	r := runDemo(t, context.Background(), "--kubeconfig", kubeconfig(t, u, false), "--exporter", "none")
	assert.Equal(t, 1, r.code, r.stdout)
	assert.Contains(t, r.stderr, "does not allow you to list pods in all namespaces")
	assert.Contains(t, r.stderr, "`kubectl auth can-i list pods -A`")
	assert.NotContains(t, r.stderr, "can-i watch")
	assert.NotContains(t, r.stderr, "did not sync within", "a forbidden LIST fails the run at once")
}

// A server that answers the preflight and then nothing: the demo says that
// no error was reported and what it last saw, never "the warnings above"
// with no warning above.
func TestServerSilentAfterThePreflightIsDescribed(t *testing.T) {
	srv := startServer(t)
	var mu sync.Mutex
	lists, watches := 0, 0
	u := proxy(t, srv, func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		if r.URL.Query().Get("watch") == "true" {
			watches++
		} else {
			lists++
		}
		pass := lists <= 1 && watches <= 1
		mu.Unlock()
		if pass {
			return false
		}
		<-r.Context().Done() // never answers
		return true
	})
	r := runDemo(t, context.Background(), "--kubeconfig", kubeconfig(t, u, false), "--exporter", "none", "--sync-timeout", "1s")
	assert.Equal(t, 1, r.code, r.stdout)
	assert.NotContains(t, r.stderr, "warnings above")
	assert.Contains(t, r.stderr, "did not sync within 1s, and no error was reported")
	assert.Contains(t, r.stderr, "if the resource holds many objects, give it longer (trace-demo --sync-timeout 5m)")
	assert.Contains(t, r.stderr, "answered the preflight LIST and WATCH, then the informer's own first request (its stream, or the LIST where the server cannot stream) got no answer")
}

// The relist lesson promises only what the run shows: no 410 Gone is ever
// drawn, so none is promised.
func TestRelistLessonPromisesNothingTheOutputDoesNotShow(t *testing.T) {
	r := scenarioRun(t, "relist").r
	// The lesson's own text: from its "▶" line up to the next status line.
	// (Not the whole output: durations like "+0.410ms" and random trace IDs
	// may contain the digits.)
	start := strings.Index(r.stdout, "▶ relist")
	require.GreaterOrEqual(t, start, 0, r.stdout)
	lesson := r.stdout[start:]
	if end := strings.Index(lesson, "\n·"); end >= 0 {
		lesson = lesson[:end]
	}
	assert.Contains(t, lesson, "Look for")
	assert.NotContains(t, lesson, "410")
	assert.Contains(t, lesson, "as a stream again")
	assert.Contains(t, r.stdout, "ListAndWatch watchlist  TOMBSTONE")
	// The lesson's result is the reflector's requests as the probe saw
	// them: the rewatch refused with 410, then a stream, and no LIST.
	m := regexp.MustCompile(`· relist: the reflector sent (.*)\n`).FindStringSubmatch(r.stdout)
	require.NotNil(t, m, r.stdout)
	assert.Regexp(t, `WATCH from \d+ · ERROR Expired → STREAM from \d+ · \d+ objects? · bookmark rv \d+: the whole state streamed again, no LIST$`, m[1])
	assert.NotContains(t, m[1], "LIST from")
}

// The fallback lesson shows a server that cannot stream, from what really
// happened: its result line is the probe's requests (the rewatch ended by
// 410, the stream refused with 422 Invalid, the LIST, the WATCH), and the
// spans it points a trace viewer at exist: the cycle's failed
// Reflector.watchlist, its watchlist.fallback event, then Reflector.list;
// the listed objects' roots are "ListAndWatch list".
func TestFallbackLessonShowsTheRefusedStreamThenListThenWatch(t *testing.T) {
	run := scenarioRun(t, "fallback")
	r, out := run.r, run.out
	assert.Empty(t, r.stderr)
	assert.Regexp(t, `\n· fallback: the reflector sent WATCH from \d+ · ERROR Expired → STREAM from \d+ · 422 Invalid → LIST from \d+ · 1 object → WATCH from \d+: `+
		`the stream was refused \(422 Invalid\), so the reflector fell back to the classic LIST, then WATCH\n`, r.stdout)
	assert.Contains(t, r.stdout, "━━ [fallback] demo/web-1 — listed after the refused stream")
	assert.Contains(t, r.stdout, "ListAndWatch list  LISTED")

	// spancheck keeps neither a span's status nor its events: read the
	// stdouttrace JSON for them.
	type span struct {
		Name        string
		SpanContext struct{ SpanID string }
		Parent      struct{ SpanID string }
		StartTime   time.Time
		EndTime     time.Time
		Status      struct{ Code, Description string }
		Events      []struct{ Name string }
	}
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	var spans []span
	for dec := json.NewDecoder(f); ; {
		var s span
		if err := dec.Decode(&s); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		spans = append(spans, s)
	}
	var refused *span
	for i := range spans {
		if spans[i].Name == tracing.SpanWatchList && spans[i].Status.Code == "Error" {
			refused = &spans[i]
		}
	}
	require.NotNil(t, refused, "a failed Reflector.watchlist span")
	assert.Contains(t, refused.Status.Description, "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled")
	var cycle, list *span
	for i := range spans {
		switch {
		case spans[i].SpanContext.SpanID == refused.Parent.SpanID:
			cycle = &spans[i]
		case spans[i].Name == tracing.SpanList && spans[i].Parent.SpanID == refused.Parent.SpanID:
			list = &spans[i]
		}
	}
	require.NotNil(t, cycle)
	assert.Equal(t, tracing.SpanListAndWatchCycle, cycle.Name)
	require.Len(t, cycle.Events, 1)
	assert.Equal(t, tracing.EventWatchListFallback, cycle.Events[0].Name)
	require.NotNil(t, list, "the fallback LIST in the same cycle")
	assert.False(t, list.StartTime.Before(refused.EndTime), "the LIST follows the refused stream")
}

// The late-handler and resync lessons end with a line that says what
// happened, as the other lessons do (before, they printed none).
func TestLateHandlerAndResyncLessonsPrintAResult(t *testing.T) {
	r := scenarioRun(t, "late-handler").r
	assert.Regexp(t, `· late-handler: \*demo\.lateHandler#3 was given 1 synthetic add, one per cached pod, each a trace of its own with root AddEventHandler`, r.stdout)
	r = scenarioRun(t, "resync").r
	assert.Regexp(t, `· resync: \*demo\.lateHandler#3 got [1-9][0-9]* resync calls? so far \(OnUpdate with the cached object, resourceVersion unchanged: root "ListAndWatch resync"\), about one per cached pod every 1s; the handlers that asked for none got none`, r.stdout)
}
