package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/internal/app/terminal"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// The order lesson's columns are what the handlers were really
// called with. The RealFIFO's handler gets every event in the API server's
// order (its initial state, then each write); the DeltaFIFO's gets each key's changes
// in a row, keys in first-arrival order, so its column differs from the
// server's while every key's own calls keep the server's order. Both
// columns are checked against the handler-call spans too, so they cannot
// be anything but recorded calls.
func TestOrderLessonShowsBothQueuesSideBySide(t *testing.T) {
	var res *orderResult
	testHookOrder = func(r *orderResult) { res = r }
	t.Cleanup(func() { testHookOrder = nil })
	var rep *terminal.Report
	testHookReport = func(_ *options, r *terminal.Report) { rep = r }
	t.Cleanup(func() { testHookReport = nil })

	r := runDemo(t, context.Background(), "--scenario", "order")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotNil(t, res)
	require.NotNil(t, rep)
	assert.Empty(t, rep.Broken)

	// The server's column: the three listed pods, then the six writes.
	require.Len(t, res.server, len(orderPods)+len(orderWrites))
	var ops []string
	for _, c := range res.server {
		ops = append(ops, c.op+" "+c.key)
	}
	assert.Equal(t, []string{
		"LISTED lessons/order-a", "LISTED lessons/order-b", "LISTED lessons/order-c",
		"MODIFIED lessons/order-a", "MODIFIED lessons/order-b", "MODIFIED lessons/order-a",
		"DELETED lessons/order-b", "MODIFIED lessons/order-c", "MODIFIED lessons/order-a",
	}, ops)

	// RealFIFO: the server's order, call for call, resourceVersions too.
	assert.True(t, sameCalls(res.realFIFO, res.asHandlerCalls()), "RealFIFO column:\n%v\nserver:\n%v", res.realFIFO, res.server)

	// DeltaFIFO: the same calls per key, but not in the server's order:
	// a key's changes in a row (merged), keys in the order of the initial state.
	assert.False(t, sameCalls(res.deltaFIFO, res.asHandlerCalls()), "the DeltaFIFO column equals the server's: nothing merged")
	assert.True(t, res.merged(), "DeltaFIFO column shows no merge:\n%v", res.deltaFIFO)
	perKey := func(cs []call, key string) []call {
		return slices.DeleteFunc(slices.Clone(cs), func(c call) bool { return c.key != key })
	}
	for _, n := range orderPods {
		k := lessonNamespace + "/" + n
		assert.True(t, sameCalls(perKey(res.deltaFIFO, k), perKey(res.asHandlerCalls(), k)), "%s: a key's own calls keep the server's order", k)
	}
	var firstSeen []string
	for _, g := range groups(res.deltaFIFO) {
		if !slices.Contains(firstSeen, g[0].key) {
			firstSeen = append(firstSeen, g[0].key)
		}
	}
	assert.Equal(t, []string{"lessons/order-a", "lessons/order-b", "lessons/order-c"}, firstSeen, "keys in first-arrival (initial state) order")

	// The columns are the handler-call spans of each informer, in order.
	for informer, col := range map[string][]call{"pods-order-realfifo": res.realFIFO, "pods-order-deltafifo": res.deltaFIFO} {
		var fromSpans []string
		for _, c := range rep.Chains {
			h := c.Spans[0]
			if h.Attr(tracing.KeyInformerName) == informer && strings.HasPrefix(h.Attr(tracing.KeyObjectKey), lessonNamespace+"/order-") {
				fromSpans = append(fromSpans, h.Name+" "+h.Attr(tracing.KeyObjectKey))
			}
		}
		var fromCol []string
		for _, c := range col {
			fromCol = append(fromCol, c.op+" "+c.key)
		}
		assert.Equal(t, fromCol, fromSpans, "%s: column vs handler-call spans", informer)
	}

	// What the reader sees: both columns and the verdict.
	assert.Contains(t, r.stdout, "API server (state, writes)   RealFIFO: handler calls      DeltaFIFO: handler calls")
	assert.Contains(t, r.stdout, "· order: RealFIFO: 9 handler calls in the server's order; DeltaFIFO merged each key's changes: order-a×")
	assert.Regexp(t, `┘ order-[abc]: [2-4] calls in a row`, r.stdout)
	assert.Contains(t, r.stdout, "━━ [order] lessons/order-a")
}

// The helpers behind the order lesson's verdict can say "no": a column in
// the server's order shows no merge, and a reordered one is not "in order".
func TestOrderVerdictCanFail(t *testing.T) {
	a, b := "lessons/order-a", "lessons/order-b"
	res := &orderResult{server: []call{{"LISTED", a, "1"}, {"LISTED", b, "2"}, {"MODIFIED", a, "3"}, {"DELETED", b, ""}}}
	res.realFIFO = res.asHandlerCalls()
	res.deltaFIFO = res.asHandlerCalls()
	assert.False(t, res.merged(), "the server's own order is no merge")
	assert.Contains(t, res.summary(), "DeltaFIFO merged nothing this time")
	res.deltaFIFO = []call{{"OnAdd", a, "1"}, {"OnUpdate", a, "3"}, {"OnAdd", b, "2"}, {"OnDelete", b, "2"}}
	assert.True(t, res.merged())
	res.realFIFO = res.deltaFIFO
	assert.Contains(t, res.summary(), "RealFIFO: 4 handler calls NOT in the server's order")
	res.realFIFO = []call{{"OnAdd", a, "1"}, {"OnAdd", b, "2"}, {"OnUpdate", a, "4"}, {"OnDelete", b, ""}}
	assert.False(t, sameCalls(res.realFIFO, res.asHandlerCalls()), "a different resourceVersion is a different call")
}

// The coalesce lesson teaches the DeltaFIFO, so it runs on one whatever
// --queue says: on the default (RealFIFO) run its HandleDeltas spans belong
// to a DeltaFIFO informer of its own, and the lesson says so.
func TestCoalesceLessonAlwaysRunsOnADeltaFIFO(t *testing.T) {
	var rep *terminal.Report
	testHookReport = func(_ *options, r *terminal.Report) { rep = r }
	t.Cleanup(func() { testHookReport = nil })
	r := runDemo(t, context.Background(), "--scenario", "coalesce")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "queue realfifo")
	assert.Contains(t, r.stdout, "on a DeltaFIFO")
	assert.Contains(t, r.stdout, "· coalesce (on a DeltaFIFO informer, whatever --queue says): ")
	require.NotNil(t, rep)
	n, queued := 0, 0
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
	assert.GreaterOrEqual(t, n, 2, "popped together")
	assert.Contains(t, r.stdout, "HandleDeltas  Updated, ")
}

// The relist lesson on the default queue shows the atomic relist: the
// tombstone's trace has HandleDeltas ReplacedAll, its root links to the
// RealFIFO.ReplacedAll span of the relist (drawn as such, not as a
// reflector cycle), and the handlers got a DeletedFinalStateUnknown.
func TestRelistLessonShowsTheAtomicRelistEntry(t *testing.T) {
	var rep *terminal.Report
	testHookReport = func(_ *options, r *terminal.Report) { rep = r }
	t.Cleanup(func() { testHookReport = nil })
	r := runDemo(t, context.Background(), "--scenario", "relist")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotNil(t, rep)
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

// --cluster takes --queue too, where the factory lets the demo choose it
// (InformerFor, for the typed resources); for any other resource it says
// why it cannot.
func TestClusterRunTakesTheQueue(t *testing.T) {
	srv := startServer(t)
	_, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "listed"}})
	require.NoError(t, err)
	for _, c := range []struct {
		queue, want, not string
	}{
		{"", tracing.SpanRealFIFOReplacedAll, tracing.SpanQueued},
		{"deltafifo", tracing.SpanQueued, tracing.SpanRealFIFOQueued},
	} {
		t.Run("queue="+c.queue, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := filepath.Join(t.TempDir(), "spans.json")
			testHookSynced = func(store.Store) { cancel() }
			t.Cleanup(func() { testHookSynced = nil })
			args := []string{"--kubeconfig", kubeconfig(t, srv.URL, false), "--namespace", "prod", "--out", out}
			if c.queue != "" {
				args = append(args, "--queue", c.queue)
			}
			r := runDemo(t, ctx, args...)
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
	r := runDemo(t, context.Background(), "--kubeconfig", kubeconfig(t, srv.URL, false), "--resource", "statefulsets", "--queue", "deltafifo", "--exporter", "none")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "--queue deltafifo: chapter 6's factory has no queue option")
	assert.Contains(t, r.stderr, "configmaps, deployments, endpoints, pods, replicasets")
}
