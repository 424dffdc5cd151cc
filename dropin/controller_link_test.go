package dropin_test

import (
	"context"
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

const outSuffix = "-out"

// writerLinksOf returns the links of s marked as a writer's
// (informer.link.annotation = tracing.k8s.io/traceparent).
func writerLinksOf(s sdktrace.ReadOnlySpan) []trace.SpanContext {
	var out []trace.SpanContext
	for _, l := range s.Links() {
		for _, a := range l.Attributes {
			if a.Key == tracing.KeyLinkAnnotation && a.Value.AsString() == tracing.AnnotationTraceparent {
				out = append(out, l.SpanContext)
			}
		}
	}
	return out
}

// processOf finds the chain of queue's reconcile of key.
func processOf(t *testing.T, rec *tracetest.SpanRecorder, queue, key string) spancheck.ReconcileChain {
	t.Helper()
	ix := spancheck.NewIndex(readOnlyToSpancheck(rec.Ended()))
	var found []spancheck.ReconcileChain
	for _, c := range ix.ReconcileChains() {
		if c.Key() == key && c.Spans[0].Attr(tracing.KeyWorkqueueName) == queue {
			found = append(found, c)
		}
	}
	require.Len(t, found, 1, "%s's reconciles of %s", queue, key)
	return found[0]
}

// chainComplete says whether queue's reconcile of key has a whole chain
// among the ended spans. A reconcile's own span ends inside the process
// call, the queue's workqueue.process span only after it returns, and the
// handler's span after the handler returns, which a fast worker can
// outrun: a test that waits only for the reconcile's span may read a chain
// cut short (both tests below failed so, once each, under load).
func chainComplete(rec *tracetest.SpanRecorder, queue, key string) bool {
	for _, c := range spancheck.NewIndex(readOnlyToSpancheck(rec.Ended())).ReconcileChains() {
		if c.Key() == key && c.Spans[0].Attr(tracing.KeyWorkqueueName) == queue && c.Complete {
			return true
		}
	}
	return false
}

// From one controller to the next, on the embedded API server: controller
// A reconciles ConfigMap ns/src and writes ns/src-out stamped with its
// reconcile's span; controller B, watching ConfigMaps on an informer of
// its own, reconciles ns/src-out. B's reconcile is in the trace of its
// informer's "ListAndWatch watch" root for that write, and that root links
// to A's span: a link, not a parent (another trace).
func TestNextControllerLinksToTheWriter(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	srv := startServer(t)
	isOut := func(m metav1.Object) bool { return strings.HasSuffix(m.GetName(), outSuffix) }

	var (
		mu      sync.Mutex
		stamped = map[string]trace.SpanContext{} // A's span that stamped each write, by the written key
	)
	a := newControllerUnderTest(t, "A", srv, apiserver.ConfigMaps, &corev1.ConfigMap{}, tp, func(m metav1.Object) bool { return !isOut(m) })
	a.run(t, 1, func(ctx context.Context, key string) {
		ctx, span := tp.Tracer("test").Start(ctx, "A writes")
		defer span.End()
		ns, name, err := cache.SplitMetaNamespaceKey(key)
		require.NoError(t, err)
		out := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + outSuffix}}
		require.True(t, dropin.StampTraceparent(ctx, out))
		// Recorded before the write: once it is created, B can reconcile
		// it (and the test read stamped) before this goroutine goes on.
		mu.Lock()
		stamped[ns+"/"+out.Name] = span.SpanContext()
		mu.Unlock()
		_, err = srv.Create(out)
		require.NoError(t, err)
	})
	b := newControllerUnderTest(t, "B", srv, apiserver.ConfigMaps, &corev1.ConfigMap{}, tp, isOut)
	b.run(t, 1, func(ctx context.Context, key string) {
		_, span := tp.Tracer("test").Start(ctx, "B reconciles "+key)
		span.End()
	})
	testutil.Eventually(t, "both informers synced", func() bool { return a.inf.HasSynced() && b.inf.HasSynced() })

	_, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "src"}})
	require.NoError(t, err)
	testutil.Eventually(t, "B reconciled A's write", func() bool {
		return len(ended(rec, "B reconciles ns/src-out")) == 1 && chainComplete(rec, "A", "ns/src") && chainComplete(rec, "B", "ns/src-out")
	})

	mu.Lock()
	writer := stamped["ns/src-out"]
	mu.Unlock()
	require.True(t, writer.IsValid())
	aChain := processOf(t, rec, "A", "ns/src")
	require.True(t, aChain.FromWatch())
	assert.Equal(t, aChain.Root().TraceID, writer.TraceID(), "A's stamping span is in the trace of the change A reconciled")

	bChain := processOf(t, rec, "B", "ns/src-out")
	require.NoError(t, bChain.Check())
	require.True(t, bChain.FromWatch(), "B's reconcile hangs from its informer's root")
	assert.Equal(t, tracing.SpanRootPrefix+"watch", bChain.Root().Name)
	assert.Equal(t, "ADDED", bChain.Root().Attr(tracing.KeyEventType))
	require.Len(t, bChain.Root().WriterLinks, 1, "spancheck reads the link as a writer's")
	assert.Equal(t, writer.SpanID(), bChain.Root().WriterLinks[0].SpanID())
	root := byID(rec)[bChain.Root().SpanID]
	links := writerLinksOf(root)
	require.Len(t, links, 1, "B's root links to A's span")
	assert.Equal(t, writer.TraceID(), links[0].TraceID())
	assert.Equal(t, writer.SpanID(), links[0].SpanID())
	assert.NotEqual(t, writer.TraceID(), root.SpanContext().TraceID(), "a link, not a parent")
	assert.Len(t, root.Links(), 2, "and its link to the reflector's cycle stays")

	b2 := ended(rec, "B reconciles ns/src-out")[0]
	assert.Equal(t, root.SpanContext().TraceID(), b2.SpanContext().TraceID(), "B's own reconcile span, from ReconcileContext, is in that root's trace")

	// A's own root for ns/src carries no annotation: no writer link.
	assert.Empty(t, writerLinksOf(byID(rec)[aChain.Root().SpanID]))
}

// An object whose traceparent annotation does not parse is handled as any
// other: reconciled, no error, no relist; its root has no writer link, an
// event saying what was ignored, and the counter counts it once.
func TestUnparsableTraceparentOnTheServerIsIgnored(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	srv := startServer(t)
	c := newControllerUnderTest(t, "C", srv, apiserver.ConfigMaps, &corev1.ConfigMap{}, tp, func(metav1.Object) bool { return true })
	c.run(t, 1, func(ctx context.Context, key string) {
		_, span := tp.Tracer("test").Start(ctx, "reconcile "+key)
		span.End()
	})
	testutil.Eventually(t, "synced", c.inf.HasSynced)
	requests := len(srv.Requests())
	before := tracing.TraceparentsIgnored()

	_, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "bad",
		Annotations: map[string]string{tracing.AnnotationTraceparent: "00-not-a-traceparent"}}})
	require.NoError(t, err)
	_, err = srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "plain"}})
	require.NoError(t, err)
	testutil.Eventually(t, "both reconciled", func() bool {
		return len(ended(rec, "reconcile ns/bad")) == 1 && len(ended(rec, "reconcile ns/plain")) == 1 &&
			chainComplete(rec, "C", "ns/bad") && chainComplete(rec, "C", "ns/plain")
	})

	assert.Equal(t, before+1, tracing.TraceparentsIgnored(), "one watch event, one informer: counted once")
	assert.Equal(t, requests, len(srv.Requests()), "no relist, no new watch: the informer went on")
	for key, ignored := range map[string]bool{"ns/bad": true, "ns/plain": false} {
		chain := processOf(t, rec, "C", key)
		require.True(t, chain.FromWatch(), key)
		root := byID(rec)[chain.Root().SpanID]
		assert.Empty(t, writerLinksOf(root), "%s: no writer link", key)
		assert.Len(t, root.Links(), 1, "%s: only the cycle's", key)
		var events []string
		for _, e := range root.Events() {
			events = append(events, e.Name)
		}
		if ignored {
			assert.Equal(t, []string{tracing.EventTraceparentIgnored}, events, key)
		} else {
			assert.Empty(t, events, key)
		}
	}
}
