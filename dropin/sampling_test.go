package dropin_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// seededIDs draws trace and span IDs from a seeded generator, so that a
// run's sampling decisions (TraceIDRatioBased reads the trace ID) are drawn
// from the same sequence every time; which root gets which ID still
// depends on the goroutines' order.
type seededIDs struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (g *seededIDs) NewIDs(context.Context) (trace.TraceID, trace.SpanID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var tid trace.TraceID
	binary.BigEndian.PutUint64(tid[:8], g.r.Uint64()|1)
	binary.BigEndian.PutUint64(tid[8:], g.r.Uint64())
	return tid, g.spanID()
}

func (g *seededIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.spanID()
}

func (g *seededIDs) spanID() trace.SpanID {
	var sid trace.SpanID
	binary.BigEndian.PutUint64(sid[:], g.r.Uint64()|1)
	return sid
}

// TestOneSamplingDecisionAcrossTwoControllers: two controllers on the
// embedded API server, each sampling 1% of roots
// (ParentBased(TraceIDRatioBased(0.01)) inside LinkAwareSampler). A
// reconciles each ConfigMap it is given and writes <name>-out stamped with
// its reconcile's span; B reconciles the -out ConfigMaps. Objects are
// created until A has kept a few traces. Then:
//
//   - every reconcile on record starts at its watch event: its chain is
//     whole up to a "ListAndWatch watch" root. Before issue 37 an Add made
//     in a handler call whose root the sampler had dropped was a root of
//     its own, sampled again, and about 1% of those reconciles began at
//     workqueue.add with no watch event above them;
//   - every span the reconciles started from ReconcileContext is in such
//     a trace (the reconcile's own spans follow the same decision);
//   - every writer link of a kept B trace resolves to a kept span of A,
//     and every write A kept is kept by B: B follows A's decision (before,
//     B sampled on its own and kept 1% of A's kept writes, and linked to
//     A's dropped ones).
func TestOneSamplingDecisionAcrossTwoControllers(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSampler(dropin.LinkAwareSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.01)))),
		sdktrace.WithIDGenerator(&seededIDs{r: rand.New(rand.NewPCG(37, 1))}),
		sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	srv := startServer(t)
	isOut := func(m metav1.Object) bool { return strings.HasSuffix(m.GetName(), outSuffix) }

	var (
		mu          sync.Mutex
		stamped     = map[string]trace.SpanContext{} // A's span that stamped each write, by the written key
		reconciledB = map[string]bool{}
	)
	a := newControllerUnderTest(t, "A", srv, apiserver.ConfigMaps, &corev1.ConfigMap{}, tp, func(m metav1.Object) bool { return !isOut(m) })
	a.run(t, 2, func(ctx context.Context, key string) {
		ctx, span := tp.Tracer("test").Start(ctx, "A writes")
		defer span.End()
		ns, name, err := cache.SplitMetaNamespaceKey(key)
		require.NoError(t, err)
		out := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + outSuffix}}
		require.True(t, dropin.StampTraceparent(ctx, out), "%s: a reconcile always has a span context to stamp, kept or not", key)
		_, err = srv.Create(out)
		require.NoError(t, err)
		mu.Lock()
		stamped[ns+"/"+out.Name] = span.SpanContext()
		mu.Unlock()
	})
	b := newControllerUnderTest(t, "B", srv, apiserver.ConfigMaps, &corev1.ConfigMap{}, tp, isOut)
	b.run(t, 2, func(ctx context.Context, key string) {
		_, span := tp.Tracer("test").Start(ctx, "B reconciles")
		span.End()
		mu.Lock()
		reconciledB[key] = true
		mu.Unlock()
	})
	testutil.Eventually(t, "both informers synced", func() bool { return a.inf.HasSynced() && b.inf.HasSynced() })

	keptByA := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, sc := range stamped {
			if sc.IsSampled() {
				n++
			}
		}
		return n
	}
	created := 0
	for created < 3000 && (created < 300 || keptByA() < 3) {
		for range 100 {
			_, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("src-", created)}})
			require.NoError(t, err)
			created++
		}
		testutil.Eventually(t, "B reconciled every write of A", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(reconciledB) == created
		})
	}
	require.GreaterOrEqual(t, keptByA(), 3, "A kept too few traces in %d changes for the test to say anything", created)

	spans := rec.Ended()
	ix := spancheck.NewIndex(readOnlyToSpancheck(spans))
	chainTraces := map[trace.TraceID]bool{}
	byQueue := map[string]int{}
	for _, c := range ix.ReconcileChains() {
		require.True(t, c.FromWatch(), "a reconcile on record does not start at its watch event:\n%s", c)
		require.NoError(t, c.Check())
		chainTraces[c.Root().TraceID] = true
		byQueue[c.Spans[0].Attr(tracing.KeyWorkqueueName)]++
	}
	for _, s := range spans {
		if s.Name() == "A writes" || s.Name() == "B reconciles" {
			require.True(t, chainTraces[s.SpanContext().TraceID()], "%s is recorded outside any reconcile's trace", s.Name())
		}
	}

	recorded := byID(rec)
	keptB := 0
	for _, c := range ix.ReconcileChains() {
		if c.Spans[0].Attr(tracing.KeyWorkqueueName) != "B" {
			continue
		}
		keptB++
		require.Len(t, c.Root().WriterLinks, 1, "B's kept root links to A's write")
		w, ok := recorded[c.Root().WriterLinks[0].SpanID()]
		require.True(t, ok, "B's kept trace links to a span of A that was not kept")
		assert.Equal(t, "A writes", w.Name())
	}
	mu.Lock()
	defer mu.Unlock()
	for key, sc := range stamped {
		if sc.IsSampled() {
			assert.Equal(t, 1, countProcesses(ix, "B", key), "%s: A kept the write, so B keeps its reconcile", key)
		}
	}
	assert.Equal(t, byQueue["A"], keptB, "B keeps exactly the traces A kept")
	t.Logf("%d changes; A kept %d traces, B %d", created, byQueue["A"], keptB)
}

func countProcesses(ix *spancheck.Index, queue, key string) int {
	n := 0
	for _, c := range ix.ReconcileChains() {
		if c.Key() == key && c.Spans[0].Attr(tracing.KeyWorkqueueName) == queue {
			n++
		}
	}
	return n
}
