package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// TestHandoffLesson: --scenario handoff draws controller A's trace and
// controller B's, whose link line names A's span; in the exported JSON, B's
// root keeps that link marked as a writer's (informer.link.annotation), it
// points at A's span under A's workqueue.process, and every root and
// reconcile keeps the contract.
func TestHandoffLesson(t *testing.T) {
	run := scenarioRun(t, "handoff")
	r, out := run.r, run.out
	assert.Contains(t, r.stdout, "━━ [handoff] lessons/handoff-out — controller B's informer receives the write")
	assert.Contains(t, r.stdout, `root links to the span its object's annotation (tracing.k8s.io/traceparent) names as its writer (unverified): "controller A: reconcile"`)
	assert.Contains(t, r.stdout, "B's reconcile is in that trace")

	spans := readSpans(t, out)
	ix := spancheck.NewIndex(spans)
	var linked int
	for _, root := range ix.Roots {
		if len(root.WriterLinks) == 0 {
			continue
		}
		linked++
		assert.Equal(t, "lessons/handoff-out", root.Attr(tracing.KeyObjectKey))
		writer := ix.ByID[root.WriterLinks[0].SpanID()]
		require.NotNil(t, writer, "the writer's span was exported too")
		assert.Equal(t, "controller A: reconcile", writer.Name)
		require.NotNil(t, ix.ByID[writer.ParentID])
		assert.Equal(t, tracing.SpanWorkqueueProcess, ix.ByID[writer.ParentID].Name)
	}
	assert.Equal(t, 1, linked)
	for _, rc := range ix.CheckRoots() {
		assert.NoError(t, rc.Err)
	}
	for _, c := range ix.ReconcileChains() {
		assert.NoError(t, c.Check())
		assert.True(t, c.FromWatch(), "%s", c)
	}
}
