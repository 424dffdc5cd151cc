package dropin_test

// Issue 38, item 1: whoever can write one object a controller watches
// chooses its annotations (and, on a fake or aggregated server, its
// name). None of them may stop the process's telemetry or swell its
// memory: every value taken from an object reaches a span valid, bounded
// and copied (internal/tracing's Value and Cut).

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// hostileTraceparents are annotation values a writer can choose, each one
// that does not parse as a traceparent: what the informer puts on the
// root's traceparent.ignored event.
func hostileTraceparents() map[string]string {
	return map[string]string{
		// Cut at byte 64 it left half of "é": invalid UTF-8.
		"split": strings.Repeat("a", 63) + "é",
		// The API server allows 256 KiB of annotations.
		"long":    strings.Repeat("0", 200<<10),
		"invalid": "00-\xff\xfe\xfd-\xc3\x28-01",
		"control": "00-\x1b[2J\x1b]0;title\x07-\r\x00-01",
	}
}

// collector is an in-process OTLP/HTTP trace endpoint: it decodes each
// export request as a collector does (proto.Unmarshal refuses a string
// that is not valid UTF-8) and keeps the IDs of the spans received.
type collector struct {
	mu       sync.Mutex
	received map[string]bool // span ID, hex
	refused  []string
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	req := &collectortrace.ExportTraceServiceRequest{}
	if err == nil {
		err = proto.Unmarshal(body, req)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.refused = append(c.refused, err.Error())
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				c.received[fmt.Sprintf("%x", s.SpanId)] = true
			}
		}
	}
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// exportErrors wraps the real exporter and keeps what each export returned:
// the batch processor would only hand it to otel.Handle.
type exportErrors struct {
	sdktrace.SpanExporter
	mu   sync.Mutex
	errs []error
}

func (e *exportErrors) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err != nil {
		e.mu.Lock()
		e.errs = append(e.errs, err)
		e.mu.Unlock()
	}
	return err
}

// Objects with each hostile annotation (and one with a name no API server
// would accept) next to ordinary ones, through the real informer and a
// traced workqueue, batched and exported by the real OTLP/HTTP exporter
// to an in-process collector: the exporter refuses nothing, and every span
// that ended arrives, the hostile objects' own included. On b93ae5b the
// 64-byte cut of an unparsable annotation left invalid UTF-8 on the root's
// event, the exporter failed to marshal the batch ("string field contains
// invalid UTF-8"), and every span of that batch, of every object, was
// lost.
func TestHostileAnnotationsDoNotStopTheOTLPExport(t *testing.T) {
	col := &collector{received: map[string]bool{}}
	endpoint := httptest.NewServer(col) // 127.0.0.1
	t.Cleanup(endpoint.Close)
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(endpoint.URL+"/v1/traces"),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	require.NoError(t, err)
	wrapped := &exportErrors{SpanExporter: exp}
	rec := tracetest.NewSpanRecorder()
	// The batcher first: a span the recorder has seen has been queued for
	// export. One batch for the whole run, exported at ForceFlush: a
	// refused value would take every other span down with it.
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(wrapped, sdktrace.WithBatchTimeout(time.Hour), sdktrace.WithMaxExportBatchSize(1<<20), sdktrace.WithMaxQueueSize(1<<20)),
		sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })

	srv := startServer(t)
	c := newControllerUnderTest(t, "hostile", srv, apiserver.ConfigMaps, &corev1.ConfigMap{}, tp, func(metav1.Object) bool { return true })
	reconciled := map[string]int{}
	var mu sync.Mutex
	c.run(t, 1, func(ctx context.Context, key string) {
		_, span := tp.Tracer("test").Start(ctx, "reconcile")
		span.End()
		mu.Lock()
		reconciled[key]++
		mu.Unlock()
	})
	testutil.Eventually(t, "synced", c.inf.HasSynced)

	var objs []*corev1.ConfigMap
	plain := func(i int) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("plain-%d", i)}}
	}
	i := 0
	for name, value := range hostileTraceparents() {
		objs = append(objs, plain(i), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "hostile-" + name,
			Annotations: map[string]string{tracing.AnnotationTraceparent: value}}})
		i++
	}
	// A name no API server would accept, which a fake clientset serves:
	// the key, informer.object.key and workqueue.key, is made of it.
	objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "name-\xff\x1b[2J-" + strings.Repeat("n", 1000)}},
		plain(i))
	for _, o := range objs {
		_, err := srv.Create(o)
		require.NoError(t, err)
	}
	// And each is written again: a MODIFIED event reads the annotation too.
	for _, o := range objs {
		o.Labels = map[string]string{"rewritten": "yes"}
		_, err := srv.Update(o)
		require.NoError(t, err)
	}
	keyOf := func(o *corev1.ConfigMap) string { return o.Namespace + "/" + o.Name }
	testutil.Eventually(t, "every object reconciled after its update", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, o := range objs {
			if reconciled[keyOf(o)] == 0 {
				return false
			}
		}
		return c.queue.Len() == 0 && len(ended(rec, tracing.SpanOnUpdate)) == len(objs)
	})
	// Every span that has ended by now is in the batcher's queue.
	sent := rec.Ended()
	assert.NoError(t, tp.ForceFlush(context.Background()), "the batch was not exported")

	wrapped.mu.Lock()
	assert.Empty(t, wrapped.errs, "the OTLP exporter refused a batch")
	wrapped.mu.Unlock()
	col.mu.Lock()
	defer col.mu.Unlock()
	assert.Empty(t, col.refused, "the collector could not decode a request")
	missing := map[string]int{}
	for _, s := range sent {
		if !col.received[s.SpanContext().SpanID().String()] {
			missing[s.Name()]++
		}
	}
	assert.Empty(t, missing, "spans that ended and never reached the collector (by name), of %d", len(sent))

	// And each hostile annotation is on its root's event, made safe.
	ignored := map[string]string{}
	for _, s := range sent {
		for _, e := range s.Events() {
			if e.Name != tracing.EventTraceparentIgnored {
				continue
			}
			for _, a := range e.Attributes {
				if a.Key == tracing.KeyTraceparent {
					ignored[spanAttr(s, string(tracing.KeyObjectKey))] = a.Value.AsString()
				}
			}
		}
	}
	for name := range hostileTraceparents() {
		v, ok := ignored["ns/hostile-"+name]
		if assert.True(t, ok, "ns/hostile-%s: no traceparent.ignored event", name) {
			assert.True(t, utf8.ValidString(v), "%s: %q", name, v)
			assert.LessOrEqual(t, len(v), 64, name)
		}
	}
}

// One object updated 2,100 times, each time with a new 200 KB annotation
// that does not parse, while the live view's span store keeps the last
// 2,000 traces: the heap afterwards stays within 64 MiB of what it was
// before.
//
// Why 64 MiB: each update is one trace of about ten spans (the root with
// its traceparent.ignored event, the queue's wait, HandleDeltas, the cache
// write, distribute, and the listener's addCh, pop, nextCh and OnUpdate),
// with short attributes; 2,000 such traces took 12 MiB here (about 6 KB a
// trace). Had each root's event kept a piece of its
// annotation that shares the annotation's memory, as value[:64] did on
// b93ae5b, the store would keep 2,000 × 200 KB = 400 MB alive (the issue
// saw a controller grow from 55 MB to 649 MB RSS). The cache and the
// embedded server hold one object each (the server keeps a history of one
// event). 64 MiB is five times the spans' share and a sixth of what
// pinning takes: the test fails on pinning with room to spare, and does
// not fail on the spans' own size.
//
// A memory bound, measured after runtime.GC with runtime.ReadMemStats; no
// timing is asserted.
func TestHostileAnnotationDoesNotPinItsValueInTheSpanStore(t *testing.T) {
	const updates, valueBytes, bound = 2100, 200 << 10, 64 << 20
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(dropin.LiveViewSpanProcessor()))
	srv, err := apiserver.Start(apiserver.Options{HistoryLimit: 1})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "target"}}
	_, err = srv.Create(cm)
	require.NoError(t, err)

	inf := dropin.NewSharedIndexInformer(srv.ListerWatcher(apiserver.ConfigMaps, metav1.NamespaceAll), &corev1.ConfigMap{}, 0, cache.Indexers{}).(*dropin.Informer)
	require.NoError(t, inf.SetTracerProvider(tp))
	seen := make(chan struct{}, 1)
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, _ any) { seen <- struct{}{} }})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { inf.RunWithContext(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	testutil.Eventually(t, "synced", inf.HasSynced)

	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	for i := range updates {
		// A new value each time, in memory of its own, as a decoded watch
		// event's is; not a traceparent, so the root's event carries it.
		var b strings.Builder
		b.Grow(valueBytes)
		fmt.Fprintf(&b, "not-a-traceparent-%06d-", i)
		b.WriteString(strings.Repeat("x", valueBytes-b.Len()))
		cm.Annotations = map[string]string{tracing.AnnotationTraceparent: b.String()}
		cm.ResourceVersion = ""
		_, err := srv.Update(cm)
		require.NoError(t, err)
		// One update at a time through the handler: the queue never holds
		// more than one object, so what is left is what the spans keep.
		select {
		case <-seen:
		case <-time.After(time.Minute):
			t.Fatalf("update %d never reached the handler", i)
		}
	}
	cm.Annotations = nil
	after := heap()
	grew := int64(after) - int64(before)
	t.Logf("heap: %d MiB before, %d MiB after %d updates with a %d KB annotation; %d MiB more",
		before>>20, after>>20, updates, valueBytes>>10, grew>>20)
	assert.Less(t, grew, int64(bound), "the span store keeps the annotations alive: %d MiB more after %d updates (bound %d MiB)",
		grew>>20, updates, bound>>20)
	runtime.KeepAlive(tp)
}
