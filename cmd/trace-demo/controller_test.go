package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// TestControllerLesson: --scenario controller runs a controller on the
// informer; its result line is what the traced queue counted (6 adds, 2
// reconciles, 4 merged), its waterfall goes on past OnAdd to the
// reconcile, and in the exported spans the second reconcile links to the
// four merged adds, each of which ends its trace, and each reconcile's
// chain goes back to its ListAndWatch root.
func TestControllerLesson(t *testing.T) {
	run := scenarioRun(t, "controller")
	r, out := run.r, run.out
	assert.Contains(t, r.stdout, "· controller: demo/ctl: 1 create and 5 quick updates made 6 adds and 2 reconciles; the workqueue merged 4 adds into a wait already there")
	assert.Contains(t, r.stdout, "━━ [controller] demo/ctl — a controller's reconcile")
	assert.Regexp(t, `OnAdd[^\n]*\n[^\n]*workqueue\.add[^\n]*\n[^\n]*workqueue\.queued[^\n]*\n[^\n]*workqueue\.process`, r.stdout)

	spans := readSpans(t, out)
	ix := spancheck.NewIndex(spans)
	var merged int
	var processes []*spancheck.Span
	for _, s := range ix.ByID {
		switch s.Name {
		case tracing.SpanWorkqueueAdd:
			if s.Attr(tracing.KeyWorkqueueCoalesced) == "true" {
				merged++
				assert.Empty(t, ix.Children[s.SpanID], "a merged add ends its trace")
			}
			p := ix.ByID[s.ParentID]
			require.NotNil(t, p, "an add has its handler call as parent")
			assert.True(t, strings.HasPrefix(p.Name, "On"), "an add's parent is the handler call, not %s", p.Name)
		case tracing.SpanWorkqueueProcess:
			processes = append(processes, s)
		}
	}
	assert.Equal(t, 4, merged)
	require.Len(t, processes, 2)
	reconciles := ix.ReconcileChains()
	require.Len(t, reconciles, 2)
	for _, c := range reconciles {
		assert.NoError(t, c.Check())
		assert.True(t, c.FromWatch(), "the reconcile's chain reaches the watch: %s", c)
	}
	for _, rc := range ix.CheckRoots() {
		assert.NoError(t, rc.Err)
	}
}
