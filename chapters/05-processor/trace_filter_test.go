package processor

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/informerbench"
	"github.com/informer-anatomy/informer-anatomy/internal/kube"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// notPerObject are the spans made whatever a TraceFilter says: the
// reflector's cycle spans and the RealFIFO's atomic entry spans.
var notPerObject = map[string]bool{
	tracing.SpanListAndWatchCycle: true, tracing.SpanList: true, tracing.SpanWatch: true, tracing.SpanWatchList: true,
	tracing.SpanRealFIFOReplacedAll: true, tracing.SpanRealFIFOSyncAll: true,
}

func recordedSpans(rec *tracetest.SpanRecorder) []spancheck.Span {
	var out []spancheck.Span
	for _, s := range rec.Ended() {
		out = append(out, spancheck.FromReadOnly(s))
	}
	return out
}

func waitDone(t *testing.T, what string, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("gave up waiting for %s", what)
	}
}

// TestTraceKeysTracesOneObjectAmongMany is the selective tracing test at
// full size: BenchmarkSharedInformer's fixture (10,000 listed pods,
// then 100,000 watch updates, 10 of each pod), two handlers, then a late
// handler given the 10,000 cached pods as synthetic adds, with
// TraceKeys naming one pod. Exactly that pod's deltas produce spans (its
// LIST entry, its 10 updates, its synthetic add), every one of its 23
// handler calls has the contract's full chain, and nothing else but the
// cycle and RealFIFO.ReplacedAll spans is recorded; every handler still gets
// every call. About 5 s under -race on two cores per queue.
func TestTraceKeysTracesOneObjectAmongMany(t *testing.T) {
	for _, q := range []QueueKind{RealFIFOQueue, DeltaFIFOQueue} {
		t.Run(q.String(), func(t *testing.T) { testTraceKeysAmongMany(t, q) })
	}
}

func testTraceKeysAmongMany(t *testing.T, q QueueKind) {
	list, updates := benchFixture()
	const events = benchListed + benchUpdates
	target := list.Items[7].Namespace + "/" + list.Items[7].Name // ns-7/p7
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	inf := NewSharedIndexInformerWithOptions(informerbench.NewLW(list, updates), &corev1.Pod{}, SharedIndexInformerOptions{
		Name: "pods", TracerProvider: tp, Queue: q, TraceFilter: deltafifo.TraceKeys(target)})
	hs := []*countingHandler{informerbench.NewCounter(events), informerbench.NewCounter(events)}
	for _, h := range hs {
		_, err := inf.AddEventHandler(h)
		require.NoError(t, err)
	}
	stop := runInformer(t, inf)
	for _, h := range hs {
		waitDone(t, "every listed pod and every update to reach both handlers", h.Done)
	}
	late := informerbench.NewCounter(benchListed)
	_, err := inf.AddEventHandler(late)
	require.NoError(t, err)
	waitDone(t, "the late handler's synthetic adds", late.Done)
	stop() // the processor has returned: every handler span is ended

	for _, h := range append(hs, late) {
		assert.Equal(t, h.Want, h.Count(), "every object is handled, traced or not")
	}
	spans := recordedSpans(rec)
	roots := map[string]int{}
	for i := range spans {
		s := &spans[i]
		if notPerObject[s.Name] {
			continue
		}
		require.Equal(t, target, s.Attr(tracing.KeyObjectKey), "span %s is not of the one selected pod", s.Name)
		if s.IsRoot() {
			roots[s.Name+" "+s.Attr(tracing.KeyEventType)]++
		}
	}
	perPod := benchUpdates / benchListed
	assert.Equal(t, map[string]int{"ListAndWatch list LISTED": 1, "ListAndWatch watch MODIFIED": perPod, "AddEventHandler ": 1}, roots)

	ix := spancheck.NewIndex(spans)
	checks := ix.CheckRoots()
	assert.Len(t, checks, 1+perPod)
	for _, rc := range checks {
		assert.NoError(t, rc.Err)
		assert.False(t, rc.Dropped, "the informer stopped with nothing queued")
	}
	chains := ix.HandlerChains()
	assert.Len(t, chains, 2*(1+perPod)+1, "two handlers × (listed + updates), and the late handler's synthetic add")
	for _, c := range chains {
		assert.NoError(t, c.Check())
		assert.Equal(t, target, c.Key())
	}
}

// TestTraceSelectorOnTheInformer runs a selector (app=web) against the
// embedded API server on each queue: listed, created, updated and deleted
// pods, a tombstone from a relist, and a late handler. Every root and
// every per-object span is of a web pod, each kind of root appears for one,
// every handler call for a web pod has the full chain (the counts match the
// handler's own calls), and the db pods are handled like the rest.
func TestTraceSelectorOnTheInformer(t *testing.T) {
	for _, q := range []QueueKind{RealFIFOQueue, DeltaFIFOQueue} {
		t.Run(q.String(), func(t *testing.T) { testTraceSelector(t, q) })
	}
}

func testTraceSelector(t *testing.T, q QueueKind) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	client, err := kube.RESTClientFor(srv.Config(), corev1.SchemeGroupVersion)
	require.NoError(t, err)
	create := func(name, app string) *corev1.Pod {
		o, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"app": app}}})
		require.NoError(t, err)
		return o.(*corev1.Pod)
	}
	update := func(p *corev1.Pod) {
		p = p.DeepCopy()
		p.Labels["v"] = "1"
		_, err := srv.Update(p)
		require.NoError(t, err)
	}
	web1, db1 := create("web-1", "web"), create("db-1", "db")
	create("doomed-web", "web")
	create("doomed-db", "db")

	sel, err := labels.Parse("app=web")
	require.NoError(t, err)
	inf := NewSharedIndexInformerWithOptions(reflector.NewListWatchFromClient(client, "pods", metav1.NamespaceAll, fields.Everything()),
		&corev1.Pod{}, SharedIndexInformerOptions{Name: "pods", TracerProvider: tp, Queue: q, TraceFilter: deltafifo.TraceSelector(sel)})
	h := newRecorder()
	_, err = inf.AddEventHandler(h)
	require.NoError(t, err)
	stop := runInformer(t, inf)
	testutil.Eventually(t, "synced", inf.HasSynced)

	create("web-2", "web")
	create("db-2", "db")
	update(web1)
	update(db1)
	require.NoError(t, srv.Delete(apiserver.Pods, "ns", "web-2"))
	require.NoError(t, srv.Delete(apiserver.Pods, "ns", "db-2"))
	testutil.Eventually(t, "the watch events handled", func() bool {
		n := 0
		for _, c := range h.log() {
			if strings.HasPrefix(c, "delete ns/web-2@") || strings.HasPrefix(c, "delete ns/db-2@") || strings.HasPrefix(c, "update ns/db-1@") {
				n++
			}
		}
		return n == 3
	})
	// Deleted while the watch is down: the relist's tombstones.
	srv.Stop()
	require.NoError(t, srv.Delete(apiserver.Pods, "ns", "doomed-web"))
	require.NoError(t, srv.Delete(apiserver.Pods, "ns", "doomed-db"))
	_, _ = srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: "rv"}})
	srv.Compact()
	require.NoError(t, srv.Restart())
	testutil.Eventually(t, "both tombstones handled", func() bool { _, st := h.snapshot(); return len(st) == 2 })
	late := newRecorder()
	reg, err := inf.AddEventHandler(late)
	require.NoError(t, err)
	testutil.Eventually(t, "late synced", reg.HasSynced)
	testutil.Eventually(t, "late handler's synthetic adds", func() bool { _, st := late.snapshot(); return len(st) == 2 })
	stop()

	calls := append(h.log(), late.log()...)
	webCalls := 0
	for _, c := range calls {
		if strings.Contains(c, "ns/web-") || strings.Contains(c, "ns/doomed-web") {
			webCalls++
		}
	}
	require.Greater(t, len(calls), webCalls, "db pods were handled too")

	spans := recordedSpans(rec)
	roots := map[string]bool{}
	for i := range spans {
		s := &spans[i]
		if notPerObject[s.Name] {
			continue
		}
		key := s.Attr(tracing.KeyObjectKey)
		require.True(t, strings.HasPrefix(key, "ns/web-") || key == "ns/doomed-web", "span %s for %s, which app=web does not select", s.Name, key)
		if s.IsRoot() {
			roots[s.Attr(tracing.KeyEventType)+" "+key] = true
		}
	}
	for _, want := range []string{"LISTED ns/web-1", "LISTED ns/doomed-web", "ADDED ns/web-2", "MODIFIED ns/web-1", "DELETED ns/web-2", "TOMBSTONE ns/doomed-web", " ns/web-1"} {
		assert.True(t, roots[want], "a root %q", want)
	}
	ix := spancheck.NewIndex(spans)
	for _, rc := range ix.CheckRoots() {
		assert.NoError(t, rc.Err)
	}
	chains := ix.HandlerChains()
	assert.Len(t, chains, webCalls, "a chain for each call for a web pod, none for the others")
	for _, c := range chains {
		assert.NoError(t, c.Check())
	}
}
