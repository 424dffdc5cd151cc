package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/demo/lessons"
	"github.com/informer-anatomy/informer-anatomy/demo/terminal"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// --trace-keys on the embedded run (every lesson, the coalesce and order
// lessons' own informers too): the only per-object spans are the selected
// pod's, it has each kind of root the script gives it (LIST, watch update,
// the late handler's synthetic add, resync), every one of its handler
// calls has the contract's chain, and the output says that only it was
// traced while giving the handlers' own count of every call.
func TestTraceKeysOnTheEmbeddedRunTracesOnlyThatObject(t *testing.T) {
	const key = lessons.Namespace + "/web-1"
	run := runShared(t, "trace-keys", "--trace-keys", key)
	r, rep := run.r, run.rep

	roots := map[string]bool{}
	for i := range rep.Spans {
		s := &rep.Spans[i]
		if k := s.Attr(tracing.KeyObjectKey); k != "" {
			require.Equal(t, key, k, "span %s of an object --trace-keys did not name", s.Name)
		}
		if s.IsRoot() && s.Attr(tracing.KeyObjectKey) != "" {
			roots[s.Name+" "+s.Attr(tracing.KeyEventType)] = true
		}
	}
	for _, want := range []string{"ListAndWatch list LISTED", "ListAndWatch watch MODIFIED", tracing.SpanAddEventHandle + " ", "ListAndWatch resync RESYNC"} {
		assert.True(t, roots[want], "a root %q for %s", want, key)
	}
	require.NotEmpty(t, rep.Chains)
	for _, c := range rep.Chains {
		assert.NoError(t, c.Check())
		assert.Equal(t, key, c.Key())
	}
	for _, rc := range rep.Index.CheckRoots() {
		assert.NoError(t, rc.Err)
	}
	assert.Empty(t, rep.Broken)

	assert.Contains(t, r.stdout, "only the objects selected by --trace-keys "+key+" were traced")
	assert.Contains(t, r.stdout, "[basic] "+key+" — updated (MODIFIED)", "the default waterfall is the selected pod's")
	assert.NotContains(t, r.stdout, "no such trace was recorded", "no waterfall is promised for an object left out")
	// The handlers' own count covers the pods that were not traced.
	var calls int
	for _, line := range strings.Split(r.stdout, "\n") {
		if i := strings.Index(line, "handlers counted "); i >= 0 {
			_, err := fmt.Sscan(line[i+len("handlers counted "):], &calls)
			require.NoError(t, err, line)
		}
	}
	assert.Greater(t, calls, len(rep.Chains), "every handler call is counted, not only the traced ones")
}

// --trace-selector on the embedded run: the coalesce and order lessons'
// pods carry no app label, the demo's pods neither, so the run traces only
// what the selector matches: here, nothing per object at all, and says so.
func TestTraceSelectorMatchingNothingTracesNoObject(t *testing.T) {
	var rep *terminal.Report
	var h hooks
	h.report = func(_ *options, r *terminal.Report) { rep = r }
	r := runDemoWith(t, h, context.Background(), "--trace-selector", "app=nothing-has-this", "--scenario", "basic")
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
	for i := range rep.Spans {
		s := &rep.Spans[i]
		assert.Empty(t, s.Attr(tracing.KeyObjectKey), "span %s of %s", s.Name, s.Attr(tracing.KeyObjectKey))
		assert.False(t, spancheck.IsHandlerCall(s))
	}
	assert.NotEmpty(t, rep.Spans, "the reflector's cycle spans are not per object, and are still made")
	assert.Contains(t, r.stdout, "only the objects selected by --trace-selector app=nothing-has-this were traced")
	assert.Contains(t, r.stdout, "0 deltas, 0 traced handler calls")
}

func TestBadTraceFlagsExitTwoWithAReason(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--trace-keys", "a/b/c"}, `"a/b/c" is not a store key: want namespace/name`},
		{[]string{"--trace-keys", "demo/web-1,,demo/x"}, "an empty key"},
		{[]string{"--trace-keys", "demo/"}, `"demo/" is not a store key`},
		{[]string{"--trace-selector", "app in (web"}, `--trace-selector "app in (web" is not a label selector`},
		{[]string{"--trace-selector", "a=b=c"}, "is not a label selector"},
		{[]string{"--trace-keys", "demo/a", "--trace-selector", "app=web"}, "--trace-keys and --trace-selector: give one of them"},
		// Blank is refused, the selector as the key list: a blank selector
		// parsed as "everything" and traced every object.
		{[]string{"--trace-selector", "   "}, `--trace-selector "   " is blank, which would select every object`},
		{[]string{"--trace-selector", ""}, `--trace-selector "" is blank`},
		{[]string{"--trace-keys", " "}, `--trace-keys " " is blank`},
		{[]string{"--trace-keys", ""}, `--trace-keys "" is blank`},
	} {
		r := runDemo(t, context.Background(), c.args...)
		assert.Equal(t, 2, r.code, "%v", c.args)
		assert.Contains(t, r.stderr, c.want, "%v", c.args)
	}
}

// --trace-selector on --cluster (the embedded server behind a kubeconfig):
// only the app=web pods are traced, listed or watched, and the handlers
// still count the others' calls.
func TestTraceSelectorOnAClusterTracesOnlyMatchingObjects(t *testing.T) {
	srv := startServer(t)
	pod := func(name, app string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: name, Labels: map[string]string{"app": app}}}
	}
	for _, p := range []*corev1.Pod{pod("web-listed", "web"), pod("db-listed", "db")} {
		_, err := srv.Create(p)
		require.NoError(t, err)
	}
	var rep *terminal.Report
	var h hooks
	h.report = func(_ *options, r *terminal.Report) { rep = r }
	synced := make(chan store.Store, 1)
	h.synced = func(s store.Store) { synced <- s }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan runResult)
	go func() {
		done <- runDemoWith(t, h, ctx, "--kubeconfig", kubeconfig(t, srv.URL, false), "--namespace", "prod", "--trace-selector", "app=web")
	}()
	cache := <-synced
	for _, p := range []*corev1.Pod{pod("web-watched", "web"), pod("db-watched", "db")} {
		_, err := srv.Create(p)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		_, web, _ := cache.GetByKey("prod/web-watched")
		_, db, _ := cache.GetByKey("prod/db-watched")
		return web && db
	}, 10*time.Second, time.Millisecond)
	cancel()
	r := <-done
	require.Equal(t, 0, r.code, r.stderr)

	roots := map[string]bool{}
	for i := range rep.Spans {
		s := &rep.Spans[i]
		k := s.Attr(tracing.KeyObjectKey)
		if k == "" {
			continue
		}
		require.True(t, strings.HasPrefix(k, "prod/web-"), "span %s of %s, which app=web does not select", s.Name, k)
		if s.IsRoot() {
			roots[s.Attr(tracing.KeyEventType)+" "+k] = true
		}
	}
	assert.Equal(t, map[string]bool{"LISTED prod/web-listed": true, "ADDED prod/web-watched": true}, roots)
	assert.Len(t, rep.Chains, 2*3, "two web pods, three handlers")
	for _, c := range rep.Chains {
		assert.NoError(t, c.Check())
	}
	assert.Contains(t, r.stdout, "only the objects selected by --trace-selector app=web were traced")
	assert.Contains(t, r.stdout, "the informer's handlers counted 12 calls in all", "4 pods × 3 handlers, traced or not")
}

// --trace-keys on --cluster for a resource chapter 6 has no typed informer
// for (secrets): the demo's informer is built under the unstructured type
// and takes the filter all the same; only the key's object is traced.
func TestTraceKeysOnAClusterTakeAnyResource(t *testing.T) {
	srv := startServer(t)
	for _, n := range []string{"keep", "skip"} {
		_, err := srv.Create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: n}})
		require.NoError(t, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var rep *terminal.Report
	h := hooks{report: func(_ *options, r *terminal.Report) { rep = r }, synced: func(store.Store) { cancel() }}
	r := runDemoWith(t, h, ctx, "--kubeconfig", kubeconfig(t, srv.URL, false), "--namespace", "prod", "--resource", "secrets", "--trace-keys", "prod/keep")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotNil(t, rep)
	keys := map[string]bool{}
	for _, c := range rep.Chains {
		keys[c.Key()] = true
	}
	assert.Equal(t, map[string]bool{"prod/keep": true}, keys, "only the key's object is traced")
	assert.Contains(t, r.stdout, "only the objects selected by --trace-keys prod/keep were traced")
}

// A selector of 120 KB (a script's) is echoed once, cut, with its length:
// refused, in the refusal; taken, in the summary's note of what was
// traced. Before, a refused one was printed twice whole (240 KB: the flag
// and the parser's error quoting its value), a taken one once whole.
func TestLongTraceSelectorIsEchoedOnceAndCut(t *testing.T) {
	bad := "a=" + strings.Repeat("b", 120_000) // a value past 63 characters
	r := runDemo(t, context.Background(), "--trace-selector", bad, "--scenario", "basic")
	require.Equal(t, 2, r.code, r.stdout)
	assert.Less(t, len(r.stderr), 1000, "a refusal of reasonable length, not %d bytes", len(r.stderr))
	assert.Equal(t, 1, strings.Count(r.stderr, "a=bbbb"), "the selector echoed once: %s", r.stderr)
	assert.Contains(t, r.stderr, "(120002 bytes) is not a label selector")
	assert.Contains(t, r.stderr, "must be no more than 63", "the parser's reason is still said")

	keys := make([]string, 12_000)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d=v", i)
	}
	good := strings.Join(keys, ",")
	require.Greater(t, len(good), 90_000)
	r = runDemo(t, context.Background(), "--trace-selector", good, "--scenario", "basic")
	require.Equal(t, 0, r.code, r.stderr)
	out := r.stdout + r.stderr
	assert.Less(t, len(out), 20_000, "the run's output, not the selector: %d bytes", len(out))
	assert.Equal(t, 1, strings.Count(out, "k0=v,k1=v"), "echoed once: %s", out)
	assert.Contains(t, out, "only the objects selected by --trace-selector k0=v,k1=v,")
	assert.Contains(t, out, "more bytes)")
}
