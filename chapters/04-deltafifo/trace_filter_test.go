package deltafifo

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// Selective tracing (TraceFilter, ours): the decision is taken where a
// delta's root would start and followed downstream. These tests run the
// same script on the DeltaFIFO and on the RealFIFO in both modes, with a
// filter that selects "ns/a" and "ns/gone-a" (a tombstone), and require:
// roots, queue waits, HandleDeltas and cache-write spans for exactly the
// selected objects; every object handled, the selected ones with a
// recording context and the others with none; the span contract
// (spancheck.CheckRoots) for every root that was made.

// filterRun is what one scripted run saw.
type filterRun struct {
	spans []spancheck.Span
	// handled: key → handler calls; recording: key → calls whose context
	// carried a recording span.
	handled, recording map[string]int
}

// filterConsumer is a Consumer on st whose handler records, per key, its
// calls and whether each came with a recording span.
func filterConsumer(tp trace.TracerProvider, st store.Store, run *filterRun) *Consumer {
	var mu sync.Mutex
	run.handled, run.recording = map[string]int{}, map[string]int{}
	return &Consumer{Store: st, Tracer: tracing.Tracer(tp, tracerName), Name: "pods",
		Handler: func(ctx context.Context, d Delta, _ any, _ bool) {
			key, err := DeletionHandlingMetaNamespaceKeyFunc(d.Object)
			if err != nil {
				panic(err)
			}
			mu.Lock()
			defer mu.Unlock()
			run.handled[key]++
			if trace.SpanFromContext(ctx).IsRecording() {
				run.recording[key]++
			}
		}}
}

func ended(rec *tracetest.SpanRecorder) []spancheck.Span {
	var out []spancheck.Span
	for _, s := range rec.Ended() {
		out = append(out, spancheck.FromReadOnly(s))
	}
	return out
}

// pod with labels; its store key is "ns/<name>".
func labelled(name, rv string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv, Labels: lbls}}
}

// The script, on any queue: two cached objects the relist no longer lists
// (tombstones), a LIST of a and b, watch events for a, b and c, a resync,
// and two updates still queued when the informer stops.
type scriptQueue interface {
	Queue
	ReplaceWithContext(ctx context.Context, list []any, rv string) error
	ResyncWithContext(ctx context.Context) error
	endQueuedAsDropped()
}

func runFilterScript(t *testing.T, q scriptQueue, pop func()) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, q.ReplaceWithContext(ctx, []any{mk("a", "10"), mk("b", "11")}, "11"))
	pop()
	require.NoError(t, q.Update(mk("a", "12")))
	require.NoError(t, q.Update(mk("b", "13")))
	require.NoError(t, q.Delete(mk("b", "13")))
	require.NoError(t, q.Add(mk("c", "14")))
	pop()
	require.NoError(t, q.ResyncWithContext(ctx))
	pop()
	require.NoError(t, q.Update(mk("a", "15")))
	require.NoError(t, q.Update(mk("c", "16")))
	q.endQueuedAsDropped()
}

// checkSelected applies the test's common rules to a run with the filter
// TraceKeys("ns/a", "ns/gone-a"): roots are exactly wantRoots ("EVENT key"
// → count), every per-object span is of a selected key, every root keeps
// the contract, and the handler saw every object but a recording context
// only for selected ones.
func checkSelected(t *testing.T, run filterRun, wantRoots map[string]int, wantHandled map[string]int) {
	t.Helper()
	selected := map[string]bool{"ns/a": true, "ns/gone-a": true}
	gotRoots := map[string]int{}
	perKind := map[string]int{}
	for _, s := range run.spans {
		if k := s.Attr(tracing.KeyObjectKey); k != "" {
			assert.True(t, selected[k], "span %s for %s, which the filter left out", s.Name, k)
		}
		if s.IsRoot() && len(s.Name) > len(tracing.SpanRootPrefix) && s.Name[:len(tracing.SpanRootPrefix)] == tracing.SpanRootPrefix {
			gotRoots[s.Attr(tracing.KeyEventType)+" "+s.Attr(tracing.KeyObjectKey)]++
		}
		perKind[s.Name]++
	}
	assert.Equal(t, wantRoots, gotRoots, "roots: exactly the selected objects' deltas")
	ix := spancheck.NewIndex(run.spans)
	checks := ix.CheckRoots()
	assert.Len(t, checks, total(wantRoots))
	for _, rc := range checks {
		assert.NoError(t, rc.Err)
	}
	assert.Equal(t, wantHandled, run.handled, "every object reaches the handler, selected or not")
	for key, n := range run.handled {
		if selected[key] {
			assert.Equal(t, n, run.recording[key], "every call for selected %s comes with its trace", key)
		} else {
			assert.Zero(t, run.recording[key], "no call for %s, left out, carries a span", key)
		}
	}
	assert.NotZero(t, perKind[tracing.SpanHandleDeltas])
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func seedGone(t *testing.T, st store.Store) {
	t.Helper()
	require.NoError(t, st.Add(mk("gone-a", "1")))
	require.NoError(t, st.Add(mk("gone-b", "2")))
}

func TestTraceFilterOnTheDeltaFIFO(t *testing.T) {
	rec, tp := recorder()
	st := store.NewStore(DeletionHandlingMetaNamespaceKeyFunc)
	seedGone(t, st)
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{Name: "pods", KnownObjects: st, EmitDeltaTypeReplaced: true,
		TracerProvider: tp, TraceFilter: TraceKeys("ns/a", "ns/gone-a")})
	var run filterRun
	c := filterConsumer(tp, st, &run)
	runFilterScript(t, f, func() {
		for len(popAll1(t, f, c)) > 0 {
		}
	})
	run.spans = ended(rec)
	checkSelected(t, run,
		map[string]int{"LISTED ns/a": 1, "TOMBSTONE ns/gone-a": 1, "MODIFIED ns/a": 2, "RESYNC ns/a": 1},
		map[string]int{"ns/a": 3, "ns/b": 3, "ns/c": 2, "ns/gone-a": 1, "ns/gone-b": 1})
	dropped := 0
	for _, s := range run.spans {
		if spancheck.IsDropped(&s) {
			dropped++
			assert.Equal(t, "ns/a", s.Attr(tracing.KeyObjectKey))
		}
	}
	assert.Equal(t, 1, dropped, "ns/a's update queued at stop ends its wait as dropped; ns/c's had none to end")
}

// popAll1 pops one key through the consumer, if any is queued, and returns
// it ("" when the queue was empty).
func popAll1(t *testing.T, f *DeltaFIFO, c *Consumer) string {
	t.Helper()
	f.lock.Lock()
	n := len(f.queue)
	f.lock.Unlock()
	if n == 0 {
		return ""
	}
	var key string
	_, err := f.Pop(func(obj any, initial bool) error {
		key, _ = f.KeyOf(obj)
		return c.ProcessDeltas(obj.(Deltas), initial)
	})
	require.NoError(t, err)
	return key
}

// popRealFIFO pops (in batches, as the shared informer does) until want
// entries have been handed out.
func popRealFIFO(t *testing.T, f *RealFIFO, c *Consumer, want int) {
	t.Helper()
	for got := 0; got < want; {
		require.NoError(t, f.PopBatch(func(deltas []Delta, initial bool) error {
			got += len(deltas)
			return c.ProcessDeltasInBatch(deltas, initial)
		}, func(obj any, initial bool) error {
			got++
			return c.ProcessDeltas(obj.(Deltas), initial)
		}))
	}
}

func TestTraceFilterOnTheAtomicRealFIFO(t *testing.T) {
	rec, tp := recorder()
	st := store.NewStore(DeletionHandlingMetaNamespaceKeyFunc)
	seedGone(t, st)
	f := NewRealFIFOWithOptions(RealFIFOOptions{Name: "pods", AtomicEvents: true, UnlockWhileProcessing: true,
		TracerProvider: tp, TraceFilter: TraceKeys("ns/a", "ns/gone-a")})
	var run filterRun
	c := filterConsumer(tp, st, &run)
	pops := []int{1, 4, 1} // the ReplacedAll; four watch events; the SyncAll
	runFilterScript(t, f, func() {
		popRealFIFO(t, f, c, pops[0])
		pops = pops[1:]
	})
	run.spans = ended(rec)
	checkSelected(t, run,
		map[string]int{"LISTED ns/a": 1, "TOMBSTONE ns/gone-a": 1, "MODIFIED ns/a": 2, "RESYNC ns/a": 1},
		map[string]int{"ns/a": 3, "ns/b": 3, "ns/c": 2, "ns/gone-a": 1, "ns/gone-b": 1})
	// The entry spans are not per object: one each, whatever the filter.
	entries := map[string]int{}
	for _, s := range run.spans {
		if s.Name == tracing.SpanRealFIFOReplacedAll || s.Name == tracing.SpanRealFIFOSyncAll {
			entries[s.Name]++
		}
	}
	assert.Equal(t, map[string]int{tracing.SpanRealFIFOReplacedAll: 1, tracing.SpanRealFIFOSyncAll: 1}, entries)
}

func TestTraceFilterOnThePerEventRealFIFO(t *testing.T) {
	rec, tp := recorder()
	st := store.NewStore(DeletionHandlingMetaNamespaceKeyFunc)
	seedGone(t, st)
	f := NewRealFIFOWithOptions(RealFIFOOptions{Name: "pods", KnownObjects: st,
		TracerProvider: tp, TraceFilter: TraceKeys("ns/a", "ns/gone-a")})
	var run filterRun
	c := filterConsumer(tp, st, &run)
	pops := []int{4, 4, 2} // two tombstones and two listed; four events; two Sync entries (a, c)
	runFilterScript(t, f, func() {
		popRealFIFO(t, f, c, pops[0])
		pops = pops[1:]
	})
	run.spans = ended(rec)
	checkSelected(t, run,
		map[string]int{"LISTED ns/a": 1, "TOMBSTONE ns/gone-a": 1, "MODIFIED ns/a": 2, "RESYNC ns/a": 1},
		map[string]int{"ns/a": 3, "ns/b": 3, "ns/c": 2, "ns/gone-a": 1, "ns/gone-b": 1})
}

// A label selector judges each delta by its own object, and a tombstone by
// the last state it carries. When a key's deltas are popped together and
// only some were selected (the label was removed in between), the others
// get no HandleDeltas, no cache-write span and no recording context: the
// decision made at the root is followed, not re-taken.
func TestTraceSelectorFollowsEachDeltasOwnDecision(t *testing.T) {
	rec, tp := recorder()
	st := store.NewStore(DeletionHandlingMetaNamespaceKeyFunc)
	require.NoError(t, st.Add(labelled("gone-web", "1", map[string]string{"app": "web"})))
	require.NoError(t, st.Add(labelled("gone-db", "2", map[string]string{"app": "db"})))
	sel, err := labels.Parse("app=web")
	require.NoError(t, err)
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{Name: "pods", KnownObjects: st, EmitDeltaTypeReplaced: true,
		TracerProvider: tp, TraceFilter: TraceSelector(sel)})
	var run filterRun
	c := filterConsumer(tp, st, &run)
	web := map[string]string{"app": "web"}
	require.NoError(t, f.Replace([]any{labelled("a", "10", web), labelled("b", "11", nil)}, "11"))
	for popAll1(t, f, c) != "" {
	}
	// a: still web, then unlabelled, popped together.
	require.NoError(t, f.Update(labelled("a", "12", web)))
	require.NoError(t, f.Update(labelled("a", "13", nil)))
	require.Equal(t, "ns/a", popAll1(t, f, c))
	run.spans = ended(rec)

	roots := map[string]int{}
	handled := map[string]int{}
	for _, s := range run.spans {
		switch {
		case s.IsRoot():
			roots[s.Attr(tracing.KeyEventType)+" "+s.Attr(tracing.KeyObjectKey)+" "+s.Attr(tracing.KeyResourceVersion)]++
		case s.Name == tracing.SpanHandleDeltas:
			handled[s.Attr(tracing.KeyObjectKey)]++
		}
	}
	assert.Equal(t, map[string]int{"LISTED ns/a 10": 1, "TOMBSTONE ns/gone-web 1": 1, "MODIFIED ns/a 12": 1}, roots)
	assert.Equal(t, map[string]int{"ns/a": 2, "ns/gone-web": 1}, handled,
		"one HandleDeltas per traced delta; the unlabelled update starts none")
	for _, rc := range spancheck.NewIndex(run.spans).CheckRoots() {
		assert.NoError(t, rc.Err)
	}
	assert.Equal(t, 3, run.handled["ns/a"], "the unselected update is still handled")
	assert.Equal(t, 2, run.recording["ns/a"], "but without a span")
	assert.Zero(t, run.recording["ns/gone-db"]+run.recording["ns/b"])
}

func TestTraceKeysAndTraceSelector(t *testing.T) {
	keys := TraceKeys("ns/a", "b")
	assert.True(t, keys("ns/a", nil))
	assert.True(t, keys("b", nil))
	assert.False(t, keys("ns/b", mk("b", "1")))
	assert.False(t, TraceKeys()("ns/a", nil), "no keys select nothing")

	sel, err := labels.Parse("app=web,tier!=db")
	require.NoError(t, err)
	f := TraceSelector(sel)
	web := labelled("w", "1", map[string]string{"app": "web"})
	assert.True(t, f("ns/w", web))
	assert.False(t, f("ns/x", labelled("x", "1", map[string]string{"app": "web", "tier": "db"})))
	assert.False(t, f("ns/y", labelled("y", "1", nil)))
	assert.True(t, f("ns/w", DeletedFinalStateUnknown{Key: "ns/w", Obj: web}), "a tombstone by its last state's labels")
	assert.False(t, f("ns/w", DeletedFinalStateUnknown{Key: "ns/w"}), "a tombstone with no last state")
	assert.False(t, f("x", "not an object"))
	assert.False(t, TraceSelector(nil)("ns/w", web), "a nil selector selects nothing")
	assert.True(t, TraceSelector(labels.Everything())("ns/y", labelled("y", "1", nil)))

	// A filter call allocates nothing: the filtered-out path is one call.
	assert.Zero(t, testing.AllocsPerRun(100, func() { keys("ns/zz", web) }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { f("ns/w", web) }))
	tomb := any(DeletedFinalStateUnknown{Key: "ns/w", Obj: web})
	assert.Zero(t, testing.AllocsPerRun(100, func() { f("ns/w", tomb) }))
}

// A delta the filter leaves out costs the filter call and nothing else: an
// enqueue and pop with a recording provider and a filter that selects
// nothing allocate exactly what they allocate with tracing off, on both
// queues.
func TestFilteredOutDeltaAllocatesNothingMore(t *testing.T) {
	_, tp := recorder()
	none := func(string, any) bool { return false }
	p := mk("a", "1")
	noopProcess := func(any, bool) error { return nil }

	realFIFO := func(tp trace.TracerProvider, filter TraceFilter) float64 {
		f := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, TracerProvider: tp, TraceFilter: filter})
		return testing.AllocsPerRun(200, func() {
			_ = f.Update(p)
			_, _ = f.Pop(noopProcess)
		})
	}
	deltaFIFO := func(tp trace.TracerProvider, filter TraceFilter) float64 {
		f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{TracerProvider: tp, TraceFilter: filter})
		return testing.AllocsPerRun(200, func() {
			_ = f.Update(p)
			_, _ = f.Pop(noopProcess)
		})
	}
	off := noop.NewTracerProvider()
	assert.Equal(t, realFIFO(off, nil), realFIFO(tp, none), "RealFIFO: filtered out = untraced")
	assert.Equal(t, deltaFIFO(off, nil), deltaFIFO(tp, none), "DeltaFIFO: filtered out = untraced")
	assert.Greater(t, realFIFO(tp, nil), realFIFO(off, nil), "and a traced delta does allocate (the check can fail)")

	// The consumer's side of an atomic relist: a traced entry whose objects
	// are all left out hands the handler a plain context, one filter call
	// per object.
	calls := 0
	counting := func(string, any) bool { calls++; return false }
	rf := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, TracerProvider: tp, TraceFilter: counting})
	var run filterRun
	c := filterConsumer(tp, store.NewStore(DeletionHandlingMetaNamespaceKeyFunc), &run)
	require.NoError(t, rf.Replace([]any{mk("a", "1"), mk("b", "2")}, "2"))
	_, err := rf.Pop(func(obj any, initial bool) error { return c.ProcessDeltas(obj.(Deltas), initial) })
	require.NoError(t, err)
	assert.Equal(t, 2, calls, "one filter call per listed object")
	assert.Equal(t, map[string]int{"ns/a": 1, "ns/b": 1}, run.handled)
	assert.Empty(t, run.recording)
}
