package lessons

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/demo/telemetry"
	"github.com/informer-anatomy/informer-anatomy/demo/terminal"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// scriptRun is what runScript saw of a scripted run.
type scriptRun struct {
	stdout   string
	outcomes map[string]Outcome
	report   *terminal.Report // the run's spans, analysed
}

// runScript runs lessons as trace-demo's scripted run does, every lesson
// shown in full, and returns what it printed, each lesson's outcome and
// its spans analysed.
func runScript(t *testing.T, lessons ...string) scriptRun {
	t.Helper()
	return runScriptWith(t, Options{}, lessons...)
}

// testBackoff is the reflector pacing of the tests' runs: the default's
// shape at a fortieth of its delays, so that a run does not mostly wait
// before the relist and fallback lessons' cycles.
var testBackoff = reflector.Backoff{Duration: 20 * time.Millisecond, Factor: 2, Jitter: 1, Steps: 5, Cap: 640 * time.Millisecond}

// runScriptWith is runScript with o's Queue, StepTimeout and
// ReflectorBackoff (nil: testBackoff).
func runScriptWith(t *testing.T, o Options, lessons ...string) scriptRun {
	t.Helper()
	tel, err := telemetry.New(context.Background(), "none", "", io.Discard)
	require.NoError(t, err)
	var out bytes.Buffer
	run := scriptRun{outcomes: map[string]Outcome{}}
	_, err = RunScript(context.Background(), ScriptOptions{
		Options: Options{Queue: o.Queue, Telemetry: tel, Printer: terminal.NewPrinter(&out, &out, false), StepTimeout: o.StepTimeout,
			ReflectorBackoff: cmp.Or(o.ReflectorBackoff, &testBackoff)},
		Lessons: lessons,
		Show:    func(string) Show { return Show{LookFor: true, Detail: true} },
		Outcome: func(name string, o Outcome) { run.outcomes[name] = o },
	})
	require.NoError(t, err, out.String())
	require.NoError(t, tel.Shutdown(context.Background()))
	spans, _ := tel.Collector.Snapshot()
	run.stdout, run.report = out.String(), terminal.Analyse(spans)
	return run
}

// Every relist grows the reflector's delay before its next cycle
// (client-go's 800ms, 1.6s, 3.2s …, chapter 3's backoff.go), so a lesson
// that waits for a relist must allow for that delay on top of its step
// timeout, and say why it waits. Here the pacing is 1s doubling to 4s,
// without jitter; a relist waits one delay or two (two when the
// reflector's WATCH was refused while the server was down), so the third
// relist in a row waits 4s at least, more than this run's 2.5s step
// timeout. Before, the lesson gave up on the late relist ("gave up after
// 20s waiting for the relist's tombstone", once the lesson script ran
// twice in the live view).
func TestRelistLessonWaitsOutTheReflectorsBackoff(t *testing.T) {
	b := reflector.Backoff{Duration: time.Second, Factor: 2, Steps: 10, Cap: 4 * time.Second, ResetAfter: 2 * time.Minute}
	r := runScriptWith(t, Options{StepTimeout: 2500 * time.Millisecond, ReflectorBackoff: &b}, "relist", "relist", "relist")
	assert.Equal(t, 3, strings.Count(r.stdout, "relist: demo/doomed reached OnDelete as a DeletedFinalStateUnknown"), r.stdout)
	assert.Contains(t, r.stdout, "waiting for the relist's tombstone for demo/doomed: the reflector waits longer before each new cycle (1s, doubling to 4s")
}

// The slow-handler lesson's "3ms per call" and the numbers agree: the run
// prints the per-call time of the calls the handler sleeps on, and the
// lesson says which calls it skips.
func TestSlowHandlerLessonMatchesItsNumbers(t *testing.T) {
	r := runScript(t, "slow-handler")
	m := regexp.MustCompile(`slowHandler took ([0-9.]+)ms per call on demo/busy \(([0-9]+) calls: ([0-9]+) OnAdd for its create, ([0-9]+) OnUpdate for the five updates\)`).FindStringSubmatch(r.stdout)
	require.NotNil(t, m, r.stdout)
	perCall, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, perCall, float64(slowDelay)/float64(time.Millisecond), "each call sleeps %v", slowDelay)
	assert.Equal(t, "6", m[2], "its ADDED and the five updates")
	assert.Equal(t, "1", m[3], "the sixth call is the create's, and the line says so")
	assert.Equal(t, "5", m[4])
}

// The embedded runs stop and compact their own API server in the relist
// lesson and the page's controls: a refused WATCH and a 410 are the lesson,
// said only with --verbose; anything else the reflector reports is a
// warning on stderr (before, all of it went to log/slog, outside the
// demo's output).
func TestEmbeddedWatchErrorsAreTheLessonsOrWarnings(t *testing.T) {
	refused := fmt.Errorf("pods: the API server refused the connection for the watch of *v1.Pod: %w", syscall.ECONNREFUSED)
	expired := apierrors.NewResourceExpired("too old resource version: 624 (627)")
	other := apierrors.NewForbidden(corev1.Resource("pods"), "", errors.New("no"))
	for _, verbose := range []bool{false, true} {
		var out, errOut bytes.Buffer
		h := watchErrors(terminal.NewPrinter(&out, &errOut, false), verbose)
		h(nil, refused)
		h(nil, expired)
		if verbose {
			assert.Equal(t, "· reflector: "+refused.Error()+"\n· reflector: "+expired.Error()+"\n", out.String())
		} else {
			assert.Empty(t, out.String())
		}
		assert.Empty(t, errOut.String())
		h(nil, other)
		assert.Equal(t, "trace-demo: reflector: "+other.Error()+" (the informer retries)\n", errOut.String())
	}
}

// The order lesson's columns are what the handlers were really
// called with. The RealFIFO's handler gets every event in the API server's
// order (its initial state, then each write); the DeltaFIFO's gets each key's changes
// in a row, keys in first-arrival order, so its column differs from the
// server's while every key's own calls keep the server's order. Both
// columns are checked against the handler-call spans too, so they cannot
// be anything but recorded calls. Both informers' pop loops are held until
// the writes are queued (popHold), so the DeltaFIFO merges every key's
// changes on every run: one run, the exact column.
func TestOrderLessonShowsBothQueuesSideBySide(t *testing.T) {
	r := runScript(t, "order")
	res := r.outcomes["order"].order
	require.NotNil(t, res)
	rep := r.report
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
	// every key's changes in a row (all merged, the writes having been
	// queued before the first pop), keys in the order of the initial state.
	assert.False(t, sameCalls(res.deltaFIFO, res.asHandlerCalls()), "the DeltaFIFO column equals the server's: nothing merged")
	assert.True(t, res.merged(), "DeltaFIFO column shows no merge:\n%v", res.deltaFIFO)
	perKey := func(cs []call, key string) []call {
		return slices.DeleteFunc(slices.Clone(cs), func(c call) bool { return c.key != key })
	}
	var want []call
	for _, n := range orderPods {
		want = append(want, perKey(res.asHandlerCalls(), lessonNamespace+"/"+n)...)
	}
	assert.True(t, sameCalls(res.deltaFIFO, want), "DeltaFIFO column:\n%v\nwant each key's calls in a row, in initial-state order:\n%v", res.deltaFIFO, want)

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
	assert.Contains(t, r.stdout, "· order: RealFIFO: 9 handler calls in the server's order; DeltaFIFO merged each key's changes: order-a×4 order-b×3 order-c×2\n")
	for _, row := range []string{"┘ order-a: 4 calls in a row", "┘ order-b: 3 calls in a row", "┘ order-c: 2 calls in a row"} {
		assert.Contains(t, r.stdout, row)
	}
	// The waterfall it offers is there to draw.
	show := r.outcomes["order"].Show
	require.Len(t, show, 1)
	assert.Equal(t, "order", show[0].Step)
	assert.NotNil(t, rep.Find(show[0]), "no trace for %s", show[0].Title)
}

// The queue lessons show the same on every run, whatever queue the main
// informer runs on, run after run as the live view's script runs them (the
// second run lists the first one's pods anew): the coalesce lesson pops
// its three deltas together, the order lesson's DeltaFIFO merges every
// key's changes, and the trace each offers to draw is there. Before their
// pop loops were held (popHold), 600 filler pods made this likely, and the
// tests retried up to three times. Run it with
// KUBE_FEATURE_WatchListClient=false too: the informers then LIST, and the
// lessons write when the LIST has returned (afterInitialState).
func TestQueueLessonsShowTheSameOnEveryRun(t *testing.T) {
	for _, q := range []processor.QueueKind{processor.RealFIFOQueue, processor.DeltaFIFOQueue} {
		t.Run(q.String(), func(t *testing.T) {
			r := runScriptWith(t, Options{Queue: q}, "coalesce", "order", "coalesce", "order")
			assert.Equal(t, 2, strings.Count(r.stdout, "· coalesce (on a DeltaFIFO informer, whatever --queue says): 3 deltas of lessons/web-coalesced were popped together\n"), r.stdout)
			assert.Equal(t, 2, strings.Count(r.stdout, "· order: RealFIFO: 9 handler calls in the server's order; DeltaFIFO merged each key's changes: order-a×4 order-b×3 order-c×2\n"), r.stdout)
			for _, name := range []string{"coalesce", "order"} {
				for _, show := range r.outcomes[name].Show {
					assert.NotNil(t, r.report.Find(show), "no trace for %s", show.Title)
				}
			}
		})
	}
}

// The helpers behind the order lesson's verdict can say "no": a column in
// the server's order shows no merge, and a reordered one is not "in order".
func TestOrderVerdictCanFail(t *testing.T) {
	a, b := "lessons/order-a", "lessons/order-b"
	res := &orderResult{server: []call{{"LISTED", a, "1"}, {"LISTED", b, "2"}, {"MODIFIED", a, "3"}, {"DELETED", b, ""}}}
	res.realFIFO = res.asHandlerCalls()
	res.deltaFIFO = res.asHandlerCalls()
	assert.False(t, res.merged(), "the server's own order is no merge")
	assert.Contains(t, res.summary(), "DeltaFIFO merged nothing")
	res.deltaFIFO = []call{{"OnAdd", a, "1"}, {"OnUpdate", a, "3"}, {"OnAdd", b, "2"}, {"OnDelete", b, "2"}}
	assert.True(t, res.merged())
	res.realFIFO = res.deltaFIFO
	assert.Contains(t, res.summary(), "RealFIFO: 4 handler calls NOT in the server's order")
	res.realFIFO = []call{{"OnAdd", a, "1"}, {"OnAdd", b, "2"}, {"OnUpdate", a, "4"}, {"OnDelete", b, ""}}
	assert.False(t, sameCalls(res.realFIFO, res.asHandlerCalls()), "a different resourceVersion is a different call")
}

// The handoff lesson: controller A's reconcile writes lessons/handoff-out
// stamped with its span; controller B's informer roots the ADDED of that
// write in a trace of its own that links to A's span, and B's reconcile
// is in that trace. Run twice, as the live view's script may: each run
// makes its own pair of traces.
func TestHandoffLessonLinksTheNextControllerToTheWriter(t *testing.T) {
	r := runScript(t, "handoff", "handoff")
	assert.Equal(t, 2, strings.Count(r.stdout, "B's reconcile is in that trace"), r.stdout)
	assert.Contains(t, r.stdout, `linked to A's "controller A: reconcile" (trace `)
	require.Len(t, r.outcomes["handoff"].Show, 2)
	var waterfalls bytes.Buffer
	terminal.DrawWaterfalls(&waterfalls, r.report, r.outcomes["handoff"].Show)
	assert.Contains(t, waterfalls.String(), "━━ [handoff] lessons/handoff-out — controller B's informer receives the write")
	assert.Regexp(t, `root links to the span its object's annotation \(tracing\.k8s\.io/traceparent\) names as its writer \(unverified\): "controller A: reconcile" [0-9a-f]{16} \(trace [0-9a-f]{32}\), started -`,
		waterfalls.String(), "the waterfall says what the link is")
	assert.Regexp(t, `workqueue\.process[^\n]*\n[^\n]*controller B: reconcile`, waterfalls.String(), "B's trace goes down to its reconcile's own span")
	assert.Empty(t, r.report.Broken)

	ix := r.report.Index
	var linked int
	for _, root := range ix.Roots {
		if root.Attr(tracing.KeyObjectKey) != "lessons/handoff-out" {
			continue
		}
		require.Equal(t, "ListAndWatch watch", root.Name, "B's informer syncs before A writes: the write is a watch event")
		require.Equal(t, "ADDED", root.Attr(tracing.KeyEventType))
		require.Len(t, root.WriterLinks, 1, "%s %s", root.Name, root.Attr(tracing.KeyEventType))
		writer := ix.ByID[root.WriterLinks[0].SpanID()]
		require.NotNil(t, writer)
		assert.Equal(t, handoffSpanA, writer.Name)
		assert.NotEqual(t, writer.TraceID, root.TraceID, "a link, not a parent")
		// A's span is in the trace of A's reconcile of lessons/handoff.
		parent := ix.ByID[writer.ParentID]
		require.NotNil(t, parent)
		assert.Equal(t, tracing.SpanWorkqueueProcess, parent.Name)
		assert.Equal(t, "lessons/handoff", parent.Attr(tracing.KeyWorkqueueKey))
		linked++
	}
	assert.Equal(t, 2, linked, "one ADDED of lessons/handoff-out per run")
	for _, c := range ix.ReconcileChains() {
		require.NoError(t, c.Check())
		require.True(t, c.FromWatch(), "%s", c)
	}
	for _, rc := range ix.CheckRoots() {
		require.NoError(t, rc.Err)
	}
}

// The handoff lesson finds its root when the run's Collector is full, as
// it is on the live view after a burst of 100,000 updates (with --ui it
// keeps the run's first telemetry.UICollected spans, for the summary).
// Before, the lesson read the Collector and said "no root of
// lessons/handoff-out linking to a writer was recorded".
func TestHandoffLessonFindsItsRootWhenTheCollectorIsFull(t *testing.T) {
	tel, err := telemetry.New(context.Background(), "none", "", io.Discard)
	require.NoError(t, err)
	tel.Collector.Limit = 20 // the basic lesson alone ends more spans
	var out bytes.Buffer
	_, err = RunScript(context.Background(), ScriptOptions{
		Options: Options{Telemetry: tel, Printer: terminal.NewPrinter(&out, &out, false), ReflectorBackoff: &testBackoff},
		Lessons: []string{"basic", "handoff"},
		Show:    func(string) Show { return Show{} },
		Outcome: func(string, Outcome) {},
	})
	require.NoError(t, err, out.String())
	require.NoError(t, tel.Shutdown(context.Background()))
	require.True(t, tel.Collector.Full(), "the Collector ran out of room before the handoff")
	assert.Contains(t, out.String(), "B's reconcile is in that trace", out.String())
	assert.Contains(t, out.String(), `linked to A's "controller A: reconcile" (trace `)
	assert.NotContains(t, out.String(), "no root of lessons/handoff-out")
}
