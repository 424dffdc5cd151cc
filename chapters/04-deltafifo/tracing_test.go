//lint:file-ignore SA1019 the deprecated no-op TracerProvider is still handed around; this file checks that it counts as off

package deltafifo

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/kube"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

func recorder() (*tracetest.SpanRecorder, *sdktrace.TracerProvider) {
	rec := tracetest.NewSpanRecorder()
	return rec, sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
}

func attr(s sdktrace.ReadOnlySpan, k attribute.Key) string {
	for _, a := range s.Attributes() {
		if a.Key == k {
			return a.Value.String()
		}
	}
	return ""
}

// chain is one delta's trace: its root and the root's children by name.
type chain struct {
	root     sdktrace.ReadOnlySpan
	children map[string]sdktrace.ReadOnlySpan
}

// chains groups ended spans into per-delta traces keyed by
// "<event type> <object key>".
func chains(spans []sdktrace.ReadOnlySpan) map[string]chain {
	byID := map[trace.SpanID]*chain{}
	out := map[string]chain{}
	for _, s := range spans {
		if s.Parent().IsValid() {
			continue
		}
		if name := s.Name(); len(name) > len(tracing.SpanRootPrefix) && name[:len(tracing.SpanRootPrefix)] == tracing.SpanRootPrefix {
			byID[s.SpanContext().SpanID()] = &chain{root: s, children: map[string]sdktrace.ReadOnlySpan{}}
		}
	}
	for _, s := range spans {
		if c := byID[s.Parent().SpanID()]; c != nil && s.Parent().TraceID() == c.root.SpanContext().TraceID() {
			c.children[s.Name()] = s
		}
	}
	for _, c := range byID {
		// The same object can be listed again by a relist: keep its first trace.
		k := attr(c.root, tracing.KeyEventType) + " " + attr(c.root, tracing.KeyObjectKey)
		if prev, ok := out[k]; !ok || c.root.StartTime().Before(prev.root.StartTime()) {
			out[k] = *c
		}
	}
	return out
}

// The initial state and a relist's are streamed by default (roots
// "ListAndWatch watchlist"), LISTed when the ListerWatcher opts out
// ("ListAndWatch list"); the rest of the chain is the same.
func TestTracesThroughTheInformer(t *testing.T) {
	for _, source := range []string{"watchlist", "list"} {
		t.Run(source, func(t *testing.T) { testTracesThroughTheInformer(t, source) })
	}
}

func testTracesThroughTheInformer(t *testing.T, source string) {
	rec, tp := recorder()
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	_, _ = srv.Create(mk("listed", ""))
	c := &calls{}
	client, err := kube.RESTClientFor(srv.Config(), corev1.SchemeGroupVersion)
	require.NoError(t, err)
	var lw reflector.ListerWatcher = reflector.NewListWatchFromClient(client, "pods", metav1.NamespaceAll, fields.Everything())
	if source == "list" {
		lw = listOnly(lw.(*reflector.ListWatch))
	}
	ctrl, _ := startInformerOn(t, lw, c, WithName("pods"), WithTracerProvider(tp))
	testutil.Eventually(t, "synced", ctrl.HasSynced)

	created, _ := srv.Create(mk("watched", ""))
	p := created.(*corev1.Pod).DeepCopy()
	p.Labels = map[string]string{"x": "y"}
	_, _ = srv.Update(p)
	testutil.Eventually(t, "add and update handled", func() bool { return len(c.snapshot()) == 3 })
	// The tombstone: a delete the watch misses.
	srv.Stop()
	_ = srv.Delete(apiserver.Pods, "ns", "watched")
	_, _ = srv.Create(&corev1.ConfigMap{ObjectMeta: mk("rv-mover", "").ObjectMeta})
	srv.Compact()
	require.NoError(t, srv.Restart())
	testutil.Eventually(t, "tombstone handled", func() bool { return slices.Contains(c.snapshot(), "delete-tombstone ns/watched") })

	var got map[string]chain
	testutil.Eventually(t, "all chains ended", func() bool {
		got = chains(rec.Ended())
		_, ok := got["TOMBSTONE ns/watched"].children[tracing.SpanHandleDeltas]
		return ok
	})
	cycles := map[trace.SpanID]bool{}
	for _, s := range rec.Started() {
		if s.Name() == tracing.SpanListAndWatchCycle {
			cycles[s.SpanContext().SpanID()] = true
		}
	}
	for key, want := range map[string]struct{ root, delta string }{
		"LISTED ns/listed":     {"ListAndWatch " + source, "Replaced"},
		"ADDED ns/watched":     {"ListAndWatch watch", "Added"},
		"MODIFIED ns/watched":  {"ListAndWatch watch", "Updated"},
		"TOMBSTONE ns/watched": {"ListAndWatch " + source, "Deleted"},
	} {
		ch, ok := got[key]
		require.True(t, ok, "no trace for %s; have %v", key, keysOf(got))
		assert.Equal(t, want.root, ch.root.Name(), key)
		assert.Equal(t, trace.SpanKindProducer, ch.root.SpanKind(), key)
		assert.Equal(t, "pods", attr(ch.root, tracing.KeyInformerName), key)
		assert.Equal(t, "ns", attr(ch.root, tracing.KeyNamespace), key)
		require.Len(t, ch.root.Links(), 1, "%s: the root links to the reflector cycle that produced it", key)
		assert.True(t, cycles[ch.root.Links()[0].SpanContext.SpanID()], key)

		queued, handled := ch.children[tracing.SpanQueued], ch.children[tracing.SpanHandleDeltas]
		require.NotNil(t, queued, "%s: DeltaFIFO.queued", key)
		require.NotNil(t, handled, "%s: HandleDeltas", key)
		assert.Equal(t, want.delta, attr(queued, tracing.KeyDeltaType), key)
		assert.Equal(t, want.delta, attr(handled, tracing.KeyDeltaType), key)
		assert.Equal(t, trace.SpanKindConsumer, handled.SpanKind(), key)
		assert.False(t, queued.StartTime().Before(ch.root.StartTime()), "%s: the wait starts at enqueue", key)
		assert.False(t, handled.StartTime().Before(queued.EndTime()), "%s: handled after the wait ended", key)
	}
	assert.Equal(t, "true", attr(got["LISTED ns/listed"].children[tracing.SpanHandleDeltas], tracing.KeyInitialList))
	assert.Equal(t, "false", attr(got["ADDED ns/watched"].children[tracing.SpanHandleDeltas], tracing.KeyInitialList))
	if source == "watchlist" {
		// A streamed object's root starts when it arrived on the stream,
		// inside the first Reflector.watchlist request, not at the
		// hand-off after the bookmark: it spans the wait for the bookmark.
		var first sdktrace.ReadOnlySpan
		for _, s := range rec.Ended() {
			if s.Name() == tracing.SpanWatchList && (first == nil || s.StartTime().Before(first.StartTime())) {
				first = s
			}
		}
		require.NotNil(t, first, "the stream's span")
		root := got["LISTED ns/listed"].root
		assert.False(t, root.StartTime().Before(first.StartTime()), "the root starts after the request")
		assert.True(t, root.StartTime().Before(first.EndTime()), "the root starts when the object arrived, before the bookmark ended the request")
	}
}

func keysOf(m map[string]chain) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// In fake time (synctest), so that the waits' lengths are exact.
func TestCoalescedDeltasKeepTheirOwnTracesAndLinkEachOther(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, tp := recorder()
		f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{Name: "pods", KnownObjects: store.NewStore(DeletionHandlingMetaNamespaceKeyFunc), TracerProvider: tp})
		require.NoError(t, f.UpdateWithContext(context.Background(), mk("a", "1")))
		time.Sleep(2 * time.Millisecond) // fake time: the first delta waits exactly 2 ms longer
		require.NoError(t, f.UpdateWithContext(context.Background(), mk("a", "2")))

		var spans []trace.Span
		_, err := f.Pop(func(obj any, initial bool) error {
			_, spans = StartHandleDeltas(tp.Tracer("test"), f.Name(), "ns/a", obj.(Deltas), initial)
			return nil
		})
		require.NoError(t, err)
		for _, s := range spans {
			s.End()
		}

		var roots, handled, queued []sdktrace.ReadOnlySpan
		for _, s := range rec.Ended() {
			switch s.Name() {
			case "ListAndWatch watch":
				roots = append(roots, s)
			case tracing.SpanHandleDeltas:
				handled = append(handled, s)
			case tracing.SpanQueued:
				queued = append(queued, s)
			}
		}
		require.Len(t, roots, 2, "one trace per delta")
		require.Len(t, handled, 2)
		require.Len(t, queued, 2)
		assert.NotEqual(t, roots[0].SpanContext().TraceID(), roots[1].SpanContext().TraceID())
		for i, h := range handled {
			own, other := roots[i], roots[1-i]
			assert.Equal(t, own.SpanContext().SpanID(), h.Parent().SpanID(), "HandleDeltas %d is parented on its own root", i)
			require.Len(t, h.Links(), 1)
			assert.Equal(t, other.SpanContext(), h.Links()[0].SpanContext, "and links to the other delta's root")
			assert.Equal(t, "2", attr(h, tracing.KeyDeltasCount))
		}
		assert.Equal(t, 2*time.Millisecond, queued[0].EndTime().Sub(queued[0].StartTime())-queued[1].EndTime().Sub(queued[1].StartTime()),
			"the older delta waited 2 ms longer: wait spans start when the wait began")
	})
}

func TestNoSpansWithoutARecordingProvider(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{TracerProvider: trace.NewNoopTracerProvider()})
	require.NoError(t, f.Add(mk("a", "1")))
	_, err := f.Pop(func(obj any, _ bool) error {
		d := obj.(Deltas)
		assert.Nil(t, d[0].trace, "nothing is carried when tracing is off")
		ctxs, spans := StartHandleDeltas(trace.NewNoopTracerProvider().Tracer(""), "x", "ns/a", d, false)
		assert.Nil(t, ctxs)
		assert.Nil(t, spans)
		return nil
	})
	require.NoError(t, err)
}

// The span contract's rule for a stop with deltas still queued: each gets
// its DeltaFIFO.queued span, ended at the stop with informer.queue.dropped,
// so every exported root either reached HandleDeltas or says it was
// dropped; none is left without its wait (it would read as lost).
func TestStopEndsTheWaitOfEveryDeltaStillQueued(t *testing.T) {
	rec, tp := recorder()
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	const pods = 20
	for i := range pods {
		_, err := srv.Create(mk(fmt.Sprintf("p%02d", i), ""))
		require.NoError(t, err)
	}
	// The first pop blocks until the informer is told to stop: the other
	// listed pods are still queued behind it when the loop sees the stop.
	blocked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	process := func(context.Context, Delta, any, bool) {
		once.Do(func() { close(blocked); <-release })
	}
	client, err := kube.RESTClientFor(srv.Config(), corev1.SchemeGroupVersion)
	require.NoError(t, err)
	lw := reflector.NewListWatchFromClient(client, "pods", metav1.NamespaceAll, fields.Everything())
	_, ctrl := NewInformer(lw, &corev1.Pod{}, 0, process, WithName("pods"), WithTracerProvider(tp))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ctrl.RunWithContext(ctx) }()
	<-blocked
	cancel()
	close(release)
	<-done

	var spans []spancheck.Span
	for _, s := range rec.Ended() {
		spans = append(spans, spancheck.FromReadOnly(s))
	}
	ix := spancheck.NewIndex(spans)
	handled, dropped := 0, 0
	for _, rc := range ix.CheckRoots() {
		require.NoError(t, rc.Err)
		if rc.Dropped {
			dropped++
		} else {
			handled++
		}
	}
	assert.Equal(t, 1, handled, "the one delta popped before the stop")
	assert.Equal(t, pods-1, dropped, "every delta still queued at the stop")
	drops := ix.DroppedChains()
	require.Len(t, drops, pods-1)
	for _, c := range drops {
		require.NoError(t, c.Check())
		assert.Equal(t, "Replaced", c.Spans[0].Attr(tracing.KeyDeltaType))
		assert.Equal(t, "pods", c.Spans[0].Attr(tracing.KeyInformerName))
	}
}

// After the drop the queue is empty and closed: nothing dropped can be
// popped later, and a second call ends no wait twice.
func TestEndQueuedAsDroppedEmptiesTheQueueOnce(t *testing.T) {
	rec, tp := recorder()
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{Name: "pods", TracerProvider: tp})
	require.NoError(t, f.Add(mk("a", "1")))
	require.NoError(t, f.Update(mk("a", "2")))
	require.NoError(t, f.Add(mk("b", "1")))
	f.endQueuedAsDropped()
	f.endQueuedAsDropped()
	_, err := f.Pop(func(any, bool) error { t.Fatal("popped a dropped delta"); return nil })
	assert.ErrorIs(t, err, ErrFIFOClosed)
	require.NoError(t, f.checkInvariant())
	var queued []string
	for _, s := range rec.Ended() {
		if s.Name() == tracing.SpanQueued {
			assert.Equal(t, "true", attr(s, tracing.KeyQueueDropped))
			queued = append(queued, attr(s, tracing.KeyObjectKey)+" "+attr(s, tracing.KeyDeltaType))
		}
	}
	assert.ElementsMatch(t, []string{"ns/a Added", "ns/a Updated", "ns/b Added"}, queued)
}

// With tracing off nothing is counted, so the stop does not walk the queue.
func TestUntracedQueueCountsNoTracedDeltas(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{TracerProvider: trace.NewNoopTracerProvider()})
	for i := range 10 {
		require.NoError(t, f.Add(mk(fmt.Sprint(i), "1")))
	}
	assert.Zero(t, f.tracedQueued)
	f.endQueuedAsDropped()
	assert.Empty(t, f.queue)
}

// The count of traced deltas follows pops and the collapse of two deletes,
// so a stop walks the queue only when some wait is still open.
func TestTracedQueuedCountFollowsPopsAndCollapsedDeletes(t *testing.T) {
	_, tp := recorder()
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{TracerProvider: tp})
	require.NoError(t, f.Add(mk("a", "1")))
	require.NoError(t, f.Delete(mk("a", "2")))
	require.NoError(t, f.Delete(mk("a", "3"))) // collapsed into the first delete
	assert.Equal(t, 2, f.tracedQueued)
	_, err := f.Pop(func(any, bool) error { return nil })
	require.NoError(t, err)
	assert.Zero(t, f.tracedQueued)
}

// When dedupDeltas collapses two deletes into one, the root of the delete it
// drops was already exported. The contract still holds for it: it gets its
// queue wait and a HandleDeltas when the kept delete is popped (or its wait
// ends dropped at stop), and the popped HandleDeltas spans link each other.
func TestCollapsedDeletesKeepTheContract(t *testing.T) {
	checkAll := func(t *testing.T, rec *tracetest.SpanRecorder, wantRoots, wantDropped int) {
		t.Helper()
		var spans []spancheck.Span
		for _, s := range rec.Ended() {
			spans = append(spans, spancheck.FromReadOnly(s))
		}
		roots := spancheck.NewIndex(spans).CheckRoots()
		require.Len(t, roots, wantRoots)
		dropped := 0
		for _, rc := range roots {
			assert.NoError(t, rc.Err)
			if rc.Dropped {
				dropped++
			}
		}
		assert.Equal(t, wantDropped, dropped)
	}
	tombstone := func(name, rv string) DeletedFinalStateUnknown {
		return DeletedFinalStateUnknown{Key: "ns/" + name, Obj: mk(name, rv)}
	}
	for name, second := range map[string]any{
		"a second delete is dropped":            mk("a", "3"),
		"a tombstone after a delete is dropped": tombstone("a", "3"),
	} {
		t.Run(name+", then popped", func(t *testing.T) {
			rec, tp := recorder()
			f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{TracerProvider: tp})
			// With no known objects a DeltaFIFO ignores a delete of a key it
			// does not hold, so the key is added first.
			require.NoError(t, f.Add(mk("a", "1")))
			require.NoError(t, f.Delete(mk("a", "2")))
			require.NoError(t, f.Delete(second))
			var popped Deltas
			_, err := f.Pop(func(obj any, _ bool) error {
				popped = obj.(Deltas)
				ctxs, spans := StartHandleDeltas(f.tracer, f.Name(), "ns/a", popped, false)
				require.Len(t, ctxs, 2)
				for _, s := range spans {
					s.End()
				}
				return nil
			})
			require.NoError(t, err)
			require.Len(t, popped, 2, "Added, then one Deleted: dedupDeltas collapsed the two deletes")
			checkAll(t, rec, 3, 0)
			var handle []sdktrace.ReadOnlySpan
			for _, s := range rec.Ended() {
				if s.Name() == tracing.SpanHandleDeltas {
					handle = append(handle, s)
				}
			}
			require.Len(t, handle, 3)
			for _, h := range handle {
				assert.Len(t, h.Links(), 2, "each HandleDeltas links to the other two roots popped with it")
			}
		})
	}
	t.Run("a real delete after a tombstone replaces it, then dropped at stop", func(t *testing.T) {
		rec, tp := recorder()
		f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{TracerProvider: tp})
		require.NoError(t, f.Add(mk("a", "1")))
		require.NoError(t, f.Delete(tombstone("a", "2")))
		require.NoError(t, f.Delete(mk("a", "3")))
		require.NoError(t, f.Delete(mk("a", "4")))
		assert.Equal(t, 2, f.tracedQueued, "the Added delta, and one Deleted carrying the three delete traces")
		f.endQueuedAsDropped()
		checkAll(t, rec, 4, 4)
	})
}
