package processor

import (
	"context"
	"slices"
	"strings"
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

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

func attrOf(s sdktrace.ReadOnlySpan, k attribute.Key) (string, bool) {
	for _, a := range s.Attributes() {
		if a.Key == k {
			return a.Value.String(), true
		}
	}
	return "", false
}

// sleepy blocks in the OnUpdate of ns/sleepy to label v=1 until gate is
// closed, telling the test through entered; the two updates the test sends
// right after it queue up behind it meanwhile.
type sleepy struct {
	*recorder
	entered, gate chan struct{}
}

func (s *sleepy) OnUpdate(old, obj any) {
	if p := obj.(*corev1.Pod); p.Name == "sleepy" && p.Labels["v"] == "1" {
		close(s.entered)
		<-s.gate
	}
	s.recorder.OnUpdate(old, obj)
}

// TestEveryHandlerCallHasTheContractChain drives a traced informer through
// every kind of root (LISTED, ADDED, MODIFIED, DELETED, TOMBSTONE, RESYNC)
// and a late handler, on each queue, and checks every handler call's chain
// span by span, then every root by the contract's drop rule after the stop.
func TestEveryHandlerCallHasTheContractChain(t *testing.T) {
	for _, q := range []QueueKind{RealFIFOQueue, DeltaFIFOQueue} {
		t.Run(q.String(), func(t *testing.T) { testContractChain(t, q) })
	}
}

// testContractChain runs in fake time (synctest): the informer lists and
// watches the embedded server in process, so the wait behind the held
// handler, the 1 s resync and the reflector's backoff after the restart are
// exact and take no wall-clock time.
func testContractChain(t *testing.T, queue QueueKind) {
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		mkPod := func(name string) *corev1.Pod {
			o, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}})
			require.NoError(t, err)
			return o.(*corev1.Pod)
		}
		update := func(p *corev1.Pod, v string) *corev1.Pod {
			p = p.DeepCopy()
			p.Labels = map[string]string{"v": v}
			o, err := srv.Update(p)
			require.NoError(t, err)
			return o.(*corev1.Pod)
		}
		listed := mkPod("listed")
		_ = mkPod("doomed")
		_ = mkPod("doomed-by-relist")

		inf := NewSharedIndexInformerWithOptions(newInProcessLW(srv),
			&corev1.Pod{}, SharedIndexInformerOptions{Name: "pods", ResyncPeriod: time.Second, TracerProvider: tp, Queue: queue})
		const sleep = 150 * time.Millisecond
		handlers := []*recorder{newRecorder(), newRecorder()}
		slow := &sleepy{recorder: newRecorder(), entered: make(chan struct{}), gate: make(chan struct{})}
		var slowReg ResourceEventHandlerRegistration
		for _, h := range []ResourceEventHandler{handlers[0], handlers[1], slow} {
			reg, err := inf.AddEventHandler(h)
			require.NoError(t, err)
			slowReg = reg
		}
		stop := runInformer(t, inf)
		testutil.Eventually(t, "synced", inf.HasSynced)

		// add, update, delete
		sl := mkPod("sleepy")
		testutil.Eventually(t, "sleepy added", func() bool { _, st := slow.snapshot(); return st["ns/sleepy"] != "" })
		update(listed, "1")
		require.NoError(t, srv.Delete(apiserver.Pods, "ns", "doomed"))
		testutil.Eventually(t, "delete delivered by the watch", func() bool {
			calls, _ := handlers[0].snapshot()
			return slices.ContainsFunc(calls, func(c string) bool { return strings.HasPrefix(c, "delete ns/doomed@") })
		})
		// The slow handler: it is held in one update while two more queue up
		// behind it, for at least `sleep` (the wait the spans must show).
		sl = update(sl, "1")
		<-slow.entered
		sl = update(sl, "2")
		update(sl, "3")
		testutil.Eventually(t, "two notifications waiting behind the held handler", func() bool {
			return slowReg.(*processorListener).pendingLength.Load() >= 1
		})
		time.Sleep(sleep)
		close(slow.gate)
		if queue == DeltaFIFOQueue {
			popCoalesced(t, inf, tp, handlers[0])
		}
		// relist tombstone: the watch ends and its resumption is held back
		// while a pod is deleted and the history compacted, so the rewatch
		// gets 410 and the relist finds the pod gone. (Not a server restart:
		// a restart starts its HTTP listener in the bubble, whose blocked
		// accept would stop fake time.)
		release := srv.StallNext("watch")
		srv.CloseWatches()
		synctest.Wait()
		require.NoError(t, srv.Delete(apiserver.Pods, "ns", "doomed-by-relist"))
		_, _ = srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: "rv"}})
		srv.Compact()
		release()
		testutil.Eventually(t, "tombstone seen", func() bool {
			calls, _ := handlers[0].snapshot()
			return slices.ContainsFunc(calls, func(c string) bool { return strings.HasPrefix(c, "delete-tombstone ns/doomed-by-relist ") })
		})
		// resync (period 1s) and a late handler
		testutil.Eventually(t, "a resync reached a handler", func() bool {
			resyncTraces := map[trace.TraceID]bool{}
			ended := rec.Ended()
			for _, s := range ended {
				if s.Name() == "ListAndWatch resync" {
					resyncTraces[s.SpanContext().TraceID()] = true
				}
			}
			for _, s := range ended {
				if s.Name() == "OnUpdate" && resyncTraces[s.SpanContext().TraceID()] {
					return true
				}
			}
			return false
		})
		late := newRecorder()
		reg, err := inf.AddEventHandler(late)
		require.NoError(t, err)
		testutil.Eventually(t, "late synced", reg.HasSynced)

		// Every handler call span must be ended; count them against the calls.
		all := []*recorder{handlers[0], handlers[1], slow.recorder, late}
		totalCalls := func() int {
			n := 0
			for _, r := range all {
				c, _ := r.snapshot()
				n += len(c)
			}
			return n
		}
		handlerSpansIn := func(ended []sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
			var out []sdktrace.ReadOnlySpan
			for _, s := range ended {
				if strings.HasPrefix(s.Name(), "On") {
					out = append(out, s)
				}
			}
			return out
		}
		testutil.Eventually(t, "a span per handler call", func() bool { return len(handlerSpansIn(rec.Ended())) >= totalCalls() })
		// One snapshot for all that follows: resyncs go on meanwhile, and a
		// handler span ended after the snapshot would have no parents in it.
		ended := rec.Ended()
		handlerSpans := func() []sdktrace.ReadOnlySpan { return handlerSpansIn(ended) }

		byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
		for _, s := range ended {
			byID[s.SpanContext().SpanID()] = s
		}
		indexerWrite := map[trace.SpanID]sdktrace.ReadOnlySpan{} // HandleDeltas span → its Indexer.* child
		for _, s := range ended {
			if strings.HasPrefix(s.Name(), "Indexer.") {
				indexerWrite[s.Parent().SpanID()] = s
			}
		}
		seenRoots := map[string]bool{}
		var coalescedHandle []sdktrace.ReadOnlySpan
		for _, h := range handlerSpans() {
			var chain []string
			var spans []sdktrace.ReadOnlySpan
			for s, ok := h, true; ok; s, ok = byID[s.Parent().SpanID()] {
				chain = append(chain, s.Name())
				spans = append(spans, s)
				if !s.Parent().IsValid() {
					break
				}
			}
			root := spans[len(spans)-1]
			key, _ := attrOf(h, tracing.KeyObjectKey)
			if root.Name() == tracing.SpanAddEventHandle {
				assert.Equal(t, []string{h.Name(), "nextCh", "pop", "addCh", "AddEventHandler"}, chain, key)
			} else {
				require.Len(t, chain, 7, "%s: %v", key, chain)
				assert.Equal(t, []string{h.Name(), "nextCh", "pop", "addCh", "distribute", "HandleDeltas"}, chain[:6], key)
				assert.True(t, strings.HasPrefix(chain[6], "ListAndWatch "), chain[6])
				ev, _ := attrOf(root, tracing.KeyEventType)
				seenRoots[ev] = true
				deltaType, _ := attrOf(spans[5], tracing.KeyDeltaType)
				count, _ := attrOf(spans[5], tracing.KeyDeltasCount)
				if queue == RealFIFOQueue {
					// Per object, whatever entry it came in: the atomic
					// relist and resync entries are expanded per object.
					assert.Equal(t, "1", count, "%s: the RealFIFO never coalesces", key)
					switch ev {
					case "LISTED", "TOMBSTONE":
						assert.Equal(t, string(deltafifo.ReplacedAll), deltaType, "%s %s", key, ev)
					case "RESYNC":
						assert.Equal(t, string(deltafifo.SyncAll), deltaType, "%s %s", key, ev)
					}
				}
				// The cache write is over before the fan-out starts: the
				// Indexer span does not hide distribute's time. An atomic
				// resync (SyncAll) writes nothing, upstream as here.
				write, ok := indexerWrite[spans[5].SpanContext().SpanID()]
				if deltaType == string(deltafifo.SyncAll) {
					assert.False(t, ok, "%s: a SyncAll writes nothing, yet has %v", key, write)
				} else {
					require.True(t, ok, "%s: HandleDeltas (%s) without an Indexer.* child", key, deltaType)
					assert.False(t, write.EndTime().After(spans[4].StartTime()), "%s: %s ends after distribute starts", key, write.Name())
				}
				if count != "1" && key == "ns/coalesced" {
					coalescedHandle = append(coalescedHandle, spans[5])
				}
			}
			for _, s := range spans {
				name, _ := attrOf(s, tracing.KeyInformerName)
				assert.Equal(t, "pods", name, "%s on %s", tracing.KeyInformerName, s.Name())
				k, _ := attrOf(s, tracing.KeyObjectKey)
				assert.Equal(t, key, k, "%s on %s", tracing.KeyObjectKey, s.Name())
			}
			for _, s := range spans[:4] {
				_, ok := attrOf(s, tracing.KeyListener)
				assert.True(t, ok, "informer.listener on %s", s.Name())
			}
			_, ok := attrOf(spans[2], tracing.KeyListenerPending)
			assert.True(t, ok, "informer.listener.pending on pop")
			assert.Equal(t, trace.SpanKindConsumer, h.SpanKind())
			assert.Equal(t, trace.SpanKindProducer, spans[3].SpanKind(), "addCh")
		}
		for _, ev := range []string{"LISTED", "ADDED", "MODIFIED", "DELETED", "TOMBSTONE", "RESYNC"} {
			assert.True(t, seenRoots[ev], "a handler call traced back to a %s root", ev)
		}
		if queue == DeltaFIFOQueue {
			require.NotEmpty(t, coalescedHandle, "coalesced updates were popped together")
			for _, h := range coalescedHandle {
				assert.NotEmpty(t, h.Links(), "a coalesced delta's HandleDeltas links to the others' roots")
			}
		}

		// Waits are real: the notification behind the sleeping call waited at
		// least the sleep (exactly, in fake time), between leaving addCh and
		// reaching the handler.
		var waited []time.Duration
		for _, h := range handlerSpans() {
			if k, _ := attrOf(h, tracing.KeyObjectKey); k != "ns/sleepy" || h.Name() != "OnUpdate" {
				continue
			}
			next := byID[h.Parent().SpanID()]
			pop := byID[next.Parent().SpanID()]
			if l, _ := attrOf(next, tracing.KeyListener); l != slowReg.(*processorListener).name {
				continue
			}
			waited = append(waited, next.EndTime().Sub(pop.StartTime()))
		}
		slices.Sort(waited)
		require.NotEmpty(t, waited)
		assert.GreaterOrEqual(t, waited[len(waited)-1], sleep,
			"pop + nextCh of a notification behind a %v handler call: %v", sleep, waited)

		// After the stop, spancheck's verdict on everything exported: every
		// handler chain is whole, and every root was either handled or ended
		// its queue wait as dropped at stop.
		stop()
		checkContract(t, rec.Ended())
	})
}

// checkContract applies internal/spancheck to spans: every handler call's
// chain and every per-object root, which it returns.
func checkContract(t *testing.T, ended []sdktrace.ReadOnlySpan) []spancheck.RootCheck {
	t.Helper()
	spans := make([]spancheck.Span, len(ended))
	for i, s := range ended {
		spans[i] = spancheck.FromReadOnly(s)
	}
	ix := spancheck.NewIndex(spans)
	for _, c := range ix.HandlerChains() {
		assert.NoError(t, c.Check())
	}
	for _, c := range ix.DroppedChains() {
		assert.NoError(t, c.Check())
	}
	roots := ix.CheckRoots()
	require.NotEmpty(t, roots)
	for _, rc := range roots {
		assert.NoError(t, rc.Err)
	}
	return roots
}

// popCoalesced makes coalescing certain on the DeltaFIFO path. While
// HandleDeltas runs, DeltaFIFO.Pop holds the queue's lock, so the reflector
// cannot enqueue behind it and coalescing from the server is a matter of
// timing; so the informer's own HandleDeltas pops a traced queue holding
// two updates for one key.
func popCoalesced(t *testing.T, inf SharedIndexInformer, tp trace.TracerProvider, h *recorder) {
	t.Helper()
	q := deltafifo.NewDeltaFIFOWithOptions(deltafifo.DeltaFIFOOptions{Name: "pods", KnownObjects: inf.GetIndexer(),
		EmitDeltaTypeReplaced: true, TracerProvider: tp})
	for _, rv := range []string{"1001", "1002"} {
		require.NoError(t, q.UpdateWithContext(context.Background(),
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "coalesced", ResourceVersion: rv}}))
	}
	_, err := q.Pop(inf.(*sharedIndexInformer).HandleDeltas)
	require.NoError(t, err)
	testutil.Eventually(t, "coalesced seen", func() bool { _, st := h.snapshot(); return st["ns/coalesced"] == "1002" })
}
