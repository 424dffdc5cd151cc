package crqueue_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/dropin/crqueue"
	"github.com/informer-anatomy/informer-anatomy/internal/spantest"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

func req(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
}

func cm(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

func newPQ() priorityqueue.PriorityQueue[reconcile.Request] {
	return priorityqueue.New[reconcile.Request]("")
}

func traced(rec *tracetest.SpanRecorder, inner priorityqueue.PriorityQueue[reconcile.Request]) priorityqueue.PriorityQueue[reconcile.Request] {
	q := crqueue.NewTracedPriorityQueue("test", inner)
	q.(*crqueue.TracedPriorityQueue[reconcile.Request]).SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	return q
}

type got struct {
	name     string
	priority int
}

// drain takes every ready key (Len flushes the priority queue's add
// buffer first, so all of them are in its tree before the first Get).
func drain(t *testing.T, q workqueue.TypedRateLimitingInterface[reconcile.Request], n int) []got {
	t.Helper()
	require.Equal(t, n, q.Len())
	var out []got
	for range n {
		var g got
		if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
			r, p, _ := pq.GetWithPriority()
			g = got{r.Name, p}
		} else {
			r, _ := q.Get()
			g = got{r.Name, 0}
		}
		out = append(out, g)
		q.Done(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: g.name}})
	}
	return out
}

// TestInitialListQueuedBehindLiveChange: controller-runtime's own handler
// (handler.EnqueueRequestForObject) adds the initial list and a resync at
// handler.LowPriority and a live change at the default priority, when, and
// only when, the queue is a priorityqueue.PriorityQueue. Behind
// NewTracedPriorityQueue the live change comes out first, with the same
// keys and priorities as from the bare priority queue; behind
// dropin.NewTracedQueue (what the controller-runtime example used) the
// handler sees no priority queue and the keys come out in the order added.
func TestInitialListQueuedBehindLiveChange(t *testing.T) {
	feed := func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		h := &handler.EnqueueRequestForObject{}
		ctx := context.Background()
		for _, name := range []string{"a", "b", "c"} {
			h.Create(ctx, event.CreateEvent{Object: cm(name, "1"), IsInInitialList: true}, q)
		}
		h.Update(ctx, event.UpdateEvent{ObjectOld: cm("e", "5"), ObjectNew: cm("e", "5")}, q) // a resync
		h.Update(ctx, event.UpdateEvent{ObjectOld: cm("d", "1"), ObjectNew: cm("d", "7")}, q) // a live change
	}
	want := []got{{"d", 0}, {"a", handler.LowPriority}, {"b", handler.LowPriority}, {"c", handler.LowPriority}, {"e", handler.LowPriority}}

	bare := newPQ()
	defer bare.ShutDown()
	feed(bare)
	require.Equal(t, want, drain(t, bare, 5), "the bare priority queue")

	rec := tracetest.NewSpanRecorder()
	tq := traced(rec, newPQ())
	defer tq.ShutDown()
	feed(tq)
	require.Equal(t, want, drain(t, tq, 5), "behind NewTracedPriorityQueue, as bare")
	process := spantest.Spans(rec.Ended()).Named(tracing.SpanWorkqueueProcess)
	require.Len(t, process, 5)
	for _, p := range process {
		require.NotNil(t, spantest.Spans(rec.Ended()).ByID(p.Parent().SpanID()), "every process under its queued span")
	}
	// The spans say the priorities: each add the one it asked for, each
	// process the one it was served at.
	priorities := func(name string) map[string]int64 {
		out := map[string]int64{}
		for _, s := range spantest.Spans(rec.Ended()).Named(name) {
			out[spantest.Attr(s, tracing.KeyWorkqueueKey).AsString()] = spantest.Attr(s, tracing.KeyWorkqueuePriority).AsInt64()
		}
		return out
	}
	wantPriorities := map[string]int64{"ns/a": handler.LowPriority, "ns/b": handler.LowPriority, "ns/c": handler.LowPriority, "ns/d": 0, "ns/e": handler.LowPriority}
	require.Equal(t, wantPriorities, priorities(tracing.SpanWorkqueueAdd))
	require.Equal(t, wantPriorities, priorities(tracing.SpanWorkqueueProcess))
	for _, s := range spantest.Spans(rec.Ended()).Named(tracing.SpanWorkqueueAdd) {
		require.Equal(t, attribute.INT64, spantest.Attr(s, tracing.KeyWorkqueuePriority).Type(), "every add says its priority")
	}

	old := dropin.NewTracedQueue[reconcile.Request]("old", newPQ())
	defer old.ShutDown()
	feed(old)
	require.Equal(t, []got{{"a", 0}, {"b", 0}, {"c", 0}, {"e", 0}, {"d", 0}}, drain(t, old, 5),
		"behind dropin.NewTracedQueue the handler adds with plain Add: no priorities")
}

func coalesced(ss spantest.Spans) []bool {
	var out []bool
	for _, s := range ss {
		out = append(out, spantest.Attr(s, tracing.KeyWorkqueueCoalesced).AsBool())
	}
	return out
}

// TestTracedPriorityQueueSpans: the spans where the priority queue merges
// otherwise than client-go's queue, each run on the bare queue too to show
// it serves the key once.
//   - A live add of a key queued at low priority raises it and is merged:
//     the process links it.
//   - An immediate add of a key waiting for its delay makes it ready now:
//     its workqueue.delayed ends there (not merged) and is the queued
//     span's parent, and the add is merged into it.
//   - A delayed add of a ready key is merged: no delayed span, and nothing
//     comes out later.
func TestTracedPriorityQueueSpans(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		bare, tq := newPQ(), traced(rec, newPQ())
		defer bare.ShutDown()
		defer tq.ShutDown()
		each := func(f func(q priorityqueue.PriorityQueue[reconcile.Request])) {
			f(bare)
			f(tq)
			synctest.Wait()
		}
		start := time.Now()
		each(func(q priorityqueue.PriorityQueue[reconcile.Request]) {
			q.AddWithOpts(priorityqueue.AddOpts{Priority: new(handler.LowPriority)}, req("a"))
			q.AddAfter(req("b"), time.Hour)
			q.Add(req("c"))
		})
		time.Sleep(time.Second)
		each(func(q priorityqueue.PriorityQueue[reconcile.Request]) {
			q.Add(req("a"))                   // raises a's priority: merged
			q.Add(req("b"))                   // b ready now
			q.AddAfter(req("c"), time.Minute) // c is ready: merged
		})
		time.Sleep(time.Second)
		// b keeps its place (added second); a raised goes behind c.
		want := []got{{"b", 0}, {"c", 0}, {"a", 0}}
		require.Equal(t, want, drain(t, bare, 3))
		require.Equal(t, want, drain(t, tq, 3))
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		require.Zero(t, bare.Len(), "nothing more: the delays were merged")
		require.Zero(t, tq.Len())

		all := spantest.Spans(rec.Ended())
		require.Len(t, all, len(rec.Started()), "every span ended")
		adds := all.Named(tracing.SpanWorkqueueAdd)
		require.Len(t, adds, 6)
		require.Equal(t, []bool{false, false, false, true, true, true}, coalesced(adds))
		delayed := all.Named(tracing.SpanWorkqueueDelayed)
		require.Len(t, delayed, 1, "only b waited for a delay")
		require.Equal(t, adds[1].SpanContext().SpanID(), delayed[0].Parent().SpanID())
		require.Equal(t, start.Add(time.Second), delayed[0].EndTime(), "b's delay ended at the add that made it ready")
		require.False(t, spantest.Attr(delayed[0], tracing.KeyWorkqueueCoalesced).AsBool())

		process := all.Named(tracing.SpanWorkqueueProcess)
		require.Len(t, process, 3)
		byKey := map[string]sdktrace.ReadOnlySpan{}
		for _, p := range process {
			byKey[spantest.Attr(p, tracing.KeyWorkqueueKey).AsString()] = p
		}
		links := func(p sdktrace.ReadOnlySpan) []trace.SpanID {
			var out []trace.SpanID
			for _, l := range p.Links() {
				out = append(out, l.SpanContext.SpanID())
			}
			return out
		}
		queuedParent := func(p sdktrace.ReadOnlySpan) trace.SpanID {
			q := all.ByID(p.Parent().SpanID())
			require.Equal(t, tracing.SpanWorkqueueQueued, q.Name())
			return q.Parent().SpanID()
		}
		require.Equal(t, adds[0].SpanContext().SpanID(), queuedParent(byKey["ns/a"]))
		require.Equal(t, []trace.SpanID{adds[3].SpanContext().SpanID()}, links(byKey["ns/a"]), "the live add raised a and is linked")
		require.Equal(t, delayed[0].SpanContext().SpanID(), queuedParent(byKey["ns/b"]))
		require.Equal(t, []trace.SpanID{adds[4].SpanContext().SpanID()}, links(byKey["ns/b"]))
		require.Equal(t, adds[2].SpanContext().SpanID(), queuedParent(byKey["ns/c"]))
		require.Equal(t, []trace.SpanID{adds[5].SpanContext().SpanID()}, links(byKey["ns/c"]), "the delayed add merged into ready c")
		q := all.ByID(byKey["ns/b"].Parent().SpanID())
		require.Equal(t, time.Second, q.EndTime().Sub(q.StartTime()), "b waited from the add at 1 s to the Get at 2 s")
		require.EqualValues(t, 0, spantest.Attr(byKey["ns/a"], tracing.KeyWorkqueueRequeues).AsInt64())
	})
}

// TestRateLimitedWithNegativeAfterIsImmediate: the priority queue takes the
// shorter of After and the rate limiter's delay, so a rate-limited add with
// a negative After is ready at once; its trace has no workqueue.delayed,
// and its key waits (workqueue.queued) from the add to the Get.
func TestRateLimitedWithNegativeAfterIsImmediate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		q := traced(rec, newPQ())
		defer q.ShutDown()
		q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true, After: -time.Second}, req("a"))
		synctest.Wait()
		require.Equal(t, 1, q.Len(), "ready at once")
		time.Sleep(time.Second)
		item, _ := q.Get()
		q.Done(item)
		all := spantest.Spans(rec.Ended())
		require.Empty(t, all.Named(tracing.SpanWorkqueueDelayed))
		queued := all.Named(tracing.SpanWorkqueueQueued)
		require.Len(t, queued, 1)
		require.Equal(t, time.Second, queued[0].EndTime().Sub(queued[0].StartTime()))
	})
}
