package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/demo/terminal"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// The coalesce lesson teaches the DeltaFIFO, so it runs on one whatever
// --queue says: on the default (RealFIFO) run its HandleDeltas spans belong
// to a DeltaFIFO informer of its own, and the lesson says so. Its
// informer's pop loop is held until both watch events are queued (chapter
// 4's Config.BeforePop, the lessons' popHold), so the listed delta and the
// two watch deltas are popped together on every run: one run, exactly 3.
func TestCoalesceLessonAlwaysRunsOnADeltaFIFO(t *testing.T) {
	s := scenarioRun(t, "coalesce")
	r, rep := s.r, s.rep
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "queue realfifo")
	assert.Contains(t, r.stdout, "on a DeltaFIFO")
	require.NotNil(t, rep)
	queued, n := 0, 0
	for i := range rep.Spans {
		s := &rep.Spans[i]
		if s.Attr(tracing.KeyObjectKey) != "lessons/web-coalesced" {
			continue
		}
		assert.Equal(t, "pods-coalesce", s.Attr(tracing.KeyInformerName), "%s", s.Name)
		assert.NotEqual(t, tracing.SpanRealFIFOQueued, s.Name)
		if s.Name == tracing.SpanQueued {
			queued++
		}
		if s.Name == tracing.SpanHandleDeltas {
			n = max(n, terminal.AtoiOr(s.Attr(tracing.KeyDeltasCount)))
		}
	}
	assert.Equal(t, 3, queued, "the listed delta and two watch deltas, each waiting in a DeltaFIFO")
	assert.Equal(t, 3, n, "popped together")
	assert.Contains(t, r.stdout, "· coalesce (on a DeltaFIFO informer, whatever --queue says): 3 deltas of lessons/web-coalesced were popped together")
	assert.Contains(t, r.stdout, "HandleDeltas  Updated, 3 popped together")
}

// The relist lesson on the default queue shows the atomic relist: the
// tombstone's trace has HandleDeltas ReplacedAll, its root links to the
// RealFIFO.ReplacedAll span of the relist (drawn as such, not as a
// reflector cycle), and the handlers got a DeletedFinalStateUnknown.
func TestRelistLessonShowsTheAtomicRelistEntry(t *testing.T) {
	run := scenarioRun(t, "relist")
	r, rep := run.r, run.rep
	assert.Empty(t, rep.Broken)

	var tomb *spancheck.Span
	for _, root := range rep.Index.Roots {
		if root.Attr(tracing.KeyObjectKey) == "demo/doomed" && root.Attr(tracing.KeyEventType) == "TOMBSTONE" {
			tomb = root
		}
	}
	require.NotNil(t, tomb, "no TOMBSTONE root for demo/doomed")
	require.Len(t, tomb.Links, 1)
	entry := rep.Index.ByID[tomb.Links[0].SpanID()]
	require.NotNil(t, entry)
	assert.Equal(t, tracing.SpanRealFIFOReplacedAll, entry.Name)
	var hd *spancheck.Span
	for _, k := range rep.Index.Children[tomb.SpanID] {
		if k.Name == tracing.SpanHandleDeltas {
			hd = k
		}
	}
	require.NotNil(t, hd)
	assert.Equal(t, "ReplacedAll", hd.Attr(tracing.KeyDeltaType))
	// Every LISTED root of the relist's stream links to the same entry.
	listed := 0
	for _, root := range rep.Index.Roots {
		if root.Name == "ListAndWatch watchlist" && root.Attr(tracing.KeyEventType) == "LISTED" && len(root.Links) == 1 && root.Links[0].SpanID() == entry.SpanID {
			listed++
		}
	}
	assert.Equal(t, terminal.AtoiOr(entry.Attr(tracing.KeyListCount)), listed, "one LISTED root per object of the relist")

	assert.Contains(t, r.stdout, "ListAndWatch watchlist  TOMBSTONE")
	assert.Contains(t, r.stdout, "HandleDeltas  ReplacedAll, one object of the atomic entry")
	assert.Contains(t, r.stdout, "root links to RealFIFO.ReplacedAll: its streamed state as one queue entry")
	assert.Contains(t, r.stdout, "started when its object arrived on the stream (a tombstone's when the entry was queued)")
	assert.NotContains(t, r.stdout, "root links to the cycle span "+tracing.SpanRealFIFOReplacedAll)
	assert.Contains(t, r.stdout, "· relist: demo/doomed reached OnDelete as a DeletedFinalStateUnknown (auditHandler, metricsHandler, slowHandler)")
}

// --cluster takes --queue too: the demo builds the informer itself
// through the factory's InformerFor, for a typed resource (pods) and, under
// the unstructured type, for any other (secrets, which chapter 6 has no
// typed informer for).
func TestClusterRunTakesTheQueue(t *testing.T) {
	srv := startServer(t)
	_, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "listed"}})
	require.NoError(t, err)
	_, err = srv.Create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "listed"}})
	require.NoError(t, err)
	for _, c := range []struct {
		resource, queue, want, not string
	}{
		{"pods", "", tracing.SpanRealFIFOReplacedAll, tracing.SpanQueued},
		{"pods", "deltafifo", tracing.SpanQueued, tracing.SpanRealFIFOQueued},
		{"secrets", "deltafifo", tracing.SpanQueued, tracing.SpanRealFIFOQueued},
	} {
		t.Run(c.resource+"/queue="+c.queue, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := filepath.Join(t.TempDir(), "spans.json")
			var h hooks
			h.synced = func(store.Store) { cancel() }
			args := []string{"--kubeconfig", kubeconfig(t, srv.URL, false), "--namespace", "prod", "--resource", c.resource, "--out", out}
			if c.queue != "" {
				args = append(args, "--queue", c.queue)
			}
			r := runDemoWith(t, h, ctx, args...)
			require.Equal(t, 0, r.code, r.stderr)
			want := c.queue
			if want == "" {
				want = "realfifo"
			}
			assert.Contains(t, r.stdout, "; queue "+want)
			spans := readSpans(t, out)
			var names []string
			for _, s := range spans {
				names = append(names, s.Name)
			}
			assert.Contains(t, names, c.want)
			assert.NotContains(t, names, c.not)
		})
	}
}
