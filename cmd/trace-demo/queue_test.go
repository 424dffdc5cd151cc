package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

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

// The coalesce lesson teaches the DeltaFIFO, so it runs on one whatever
// --queue says: on the default (RealFIFO) run its HandleDeltas spans belong
// to a DeltaFIFO informer of its own, and the lesson says so. Its
// coalescing is a race the lesson arranges to win (ensureFillers,
// hookedWatch) but cannot rule out under load; when it loses it says so
// and asks to be run again, and so does this test, up to three runs.
//
// Nothing outside chapter 4 can make the win certain: DeltaFIFO.PopKeys
// calls process under the queue's lock, so a gate in anything the lesson
// reaches from the pop side (HandleDeltas, the Observer, the transformer,
// the key function) also holds off the reflector's writes, and once it
// opens, which of the two waiting Locks wins is the mutex's choice. The
// pop loop holds no lock only while the queue is empty and between two
// PopKeys calls in chapter 4's processLoop, where nothing calls out. A
// hook there (before each pop) would let the lesson hold the loop until
// hookedWatch has delivered the writes: no filler pods, no retry.
func TestCoalesceLessonAlwaysRunsOnADeltaFIFO(t *testing.T) {
	for run := 1; ; run++ {
		r, n := runCoalesceLesson(t, run == 1)
		if n >= 2 {
			assert.Contains(t, r.stdout, "· coalesce (on a DeltaFIFO informer, whatever --queue says): ")
			assert.Contains(t, r.stdout, "HandleDeltas  Updated, ")
			return
		}
		assert.Contains(t, r.stdout, "· coalesce: "+lessons.LostCoalesceRace+": ", "one delta popped, and the lesson must say it lost")
		require.Less(t, run, 3, "the lesson lost its race %d times in a row", run)
		t.Logf("run %d lost the race; running the lesson again", run)
	}
}

// runCoalesceLesson runs the coalesce lesson alone (first: the shared run
// of it, else a new one) and checks what holds whether or not it won its
// race; n is the most deltas of its object popped together.
func runCoalesceLesson(t *testing.T, first bool) (r runResult, n int) {
	t.Helper()
	var rep *terminal.Report
	if first {
		s := scenarioRun(t, "coalesce")
		r, rep = s.r, s.rep
	} else {
		var h hooks
		h.report = func(_ *options, r *terminal.Report) { rep = r }
		r = runDemoWith(t, h, context.Background(), "--scenario", "coalesce")
	}
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "queue realfifo")
	assert.Contains(t, r.stdout, "on a DeltaFIFO")
	require.NotNil(t, rep)
	queued := 0
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
	return r, n
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
			f, err := os.Open(out)
			require.NoError(t, err)
			defer f.Close()
			spans, err := spancheck.ReadStdoutTrace(f)
			require.NoError(t, err)
			var names []string
			for _, s := range spans {
				names = append(names, s.Name)
			}
			assert.Contains(t, names, c.want)
			assert.NotContains(t, names, c.not)
		})
	}
}
