package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	const key = demoNamespace + "/web-1"
	var rep *report
	testHookReport = func(_ *options, r *report) { rep = r }
	t.Cleanup(func() { testHookReport = nil })
	r := runDemo(t, context.Background(), "--trace-keys", key)
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
	require.NotNil(t, rep)

	roots := map[string]bool{}
	for i := range rep.spans {
		s := &rep.spans[i]
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
	require.NotEmpty(t, rep.chains)
	for _, c := range rep.chains {
		assert.NoError(t, c.Check())
		assert.Equal(t, key, c.Key())
	}
	for _, rc := range rep.ix.CheckRoots() {
		assert.NoError(t, rc.Err)
	}
	assert.Empty(t, rep.broken)

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
	assert.Greater(t, calls, len(rep.chains), "every handler call is counted, not only the traced ones")
}

// --trace-selector on the embedded run: the coalesce and order lessons'
// pods carry no app label, the demo's pods neither, so the run traces only
// what the selector matches: here, nothing per object at all, and says so.
func TestTraceSelectorMatchingNothingTracesNoObject(t *testing.T) {
	var rep *report
	testHookReport = func(_ *options, r *report) { rep = r }
	t.Cleanup(func() { testHookReport = nil })
	r := runDemo(t, context.Background(), "--trace-selector", "app=nothing-has-this", "--scenario", "basic")
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
	for i := range rep.spans {
		s := &rep.spans[i]
		assert.Empty(t, s.Attr(tracing.KeyObjectKey), "span %s of %s", s.Name, s.Attr(tracing.KeyObjectKey))
		assert.False(t, spancheck.IsHandlerCall(s))
	}
	assert.NotEmpty(t, rep.spans, "the reflector's cycle spans are not per object, and are still made")
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
		{[]string{"--cluster", "--resource", "v1/secrets", "--trace-keys", "x/y"}, "chapter 6's factory has no trace filter option"},
		{[]string{"--ui", "--trace-keys", "demo/web-1"}, "not wired into the embedded live view"},
	} {
		r := runDemo(t, context.Background(), c.args...)
		assert.Equal(t, 2, r.code, "%v", c.args)
		assert.Contains(t, r.stderr, c.want, "%v", c.args)
	}
}
