package livepage

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

func requestOn(local string, host string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/api/state", nil)
	r.Host = host
	if local != "" {
		addr, _ := net.ResolveTCPAddr("tcp", local)
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, addr))
	}
	return r
}

// A handler mounted on the user's own server takes the connection's local
// address for the address it serves: on its port, its own IP names it; a
// loopback name (localhost, 127.x, [::1]) does on any port, as a browser
// sends it through kubectl port-forward or an SSH tunnel to another local
// port; a rebinding name never, on no port.
func TestConnPolicy(t *testing.T) {
	for _, c := range []struct {
		local, host string
		ok          bool
	}{
		{"127.0.0.1:8080", "localhost:8080", true},
		{"127.0.0.1:8080", "127.0.0.2:8080", true},
		{"127.0.0.1:8080", "evil.example:8080", false},
		{"127.0.0.1:8080", "evil.example:9090", false},
		{"127.0.0.1:8080", "localhost.evil.example:9090", false},
		{"127.0.0.1:8080", "127.0.0.1.nip.io:9090", false},
		{"127.0.0.1:8080", "localhost:9090", true},
		{"127.0.0.1:8080", "LocalHost.:9090", true},
		{"127.0.0.1:8080", "127.0.0.1:9090", true},
		{"127.0.0.1:8080", "127.9.8.7:1", true},
		{"127.0.0.1:8080", "[::1]:9090", true},
		{"127.0.0.1:8080", "[::1]", true},
		{"127.0.0.1:8080", "localhost", true},
		{"10.0.0.5:8080", "10.0.0.5:8080", true},
		{"10.0.0.5:8080", "localhost:8080", true},
		{"10.0.0.5:8080", "localhost:9999", true},
		{"10.0.0.5:8080", "10.0.0.6:8080", false},
		{"10.0.0.5:8080", "10.0.0.5:9090", false},
		{"10.0.0.5:8080", "evil.example:8080", false},
	} {
		p := ConnPolicy(requestOn(c.local, c.host))
		require.NotNil(t, p)
		assert.Equal(t, c.ok, p.Allows(c.host), "%s on %s", c.host, c.local)
	}
	assert.Nil(t, ConnPolicy(requestOn("", "evil.example")), "no connection: not from net/http's server")
}

// Reconciles lists the workqueue.process spans, newest first, with their
// queue, key and links; other spans are not reconciles.
func TestReconcilesListsProcessSpans(t *testing.T) {
	store := NewSpanStore(10)
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(store)).Tracer("test")
	_, add := tr.Start(context.Background(), "workqueue.add")
	add.End()
	for _, key := range []string{"ns/a", "ns/b"} {
		_, sp := tr.Start(context.Background(), tracing.SpanWorkqueueProcess, trace.WithAttributes(
			tracing.KeyWorkqueueName.String("q"), tracing.KeyWorkqueueKey.String(key)),
			trace.WithLinks(trace.Link{SpanContext: add.SpanContext()}))
		sp.End()
	}
	rs := store.Reconciles(10)
	require.Len(t, rs, 2)
	assert.Equal(t, []string{"ns/b", "ns/a"}, []string{rs[0].Key, rs[1].Key}, "newest first")
	assert.Equal(t, "q", rs[0].Queue)
	assert.Equal(t, 1, rs[0].Links)
	assert.Len(t, store.Reconciles(1), 1)
}

// The waterfall says, per span, what its row shows (attributes by key,
// without informer.name, informer. cut off) and whether it is a wait:
// app.js draws both as given (TestAppNamesNoSpan keeps the names out of
// it), so a wait or a key the page did not know of is drawn right.
func TestWaterfallSaysWhatTheRowShows(t *testing.T) {
	store := NewSpanStore(10)
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(store)).Tracer("test")
	ctx, root := tr.Start(context.Background(), tracing.SpanRootPrefix+"watch", trace.WithAttributes(
		tracing.KeyInformerName.String("pods"), tracing.KeyObjectKey.String("demo/web-1"), tracing.KeyEventType.String("ADDED")))
	_, queued := tr.Start(ctx, tracing.SpanRealFIFOQueued, trace.WithAttributes(tracing.KeyInformerName.String("pods")))
	queued.End()
	hctx, hd := tr.Start(ctx, tracing.SpanHandleDeltas)
	actx, add := tr.Start(hctx, tracing.SpanAddCh, trace.WithAttributes(tracing.KeyListener.String("*demo.fast#1"), tracing.KeyNamespace.String("demo")))
	_, pop := tr.Start(actx, tracing.SpanPop)
	pop.End()
	add.End()
	// A traced workqueue's spans under the handler's call: the key's
	// wait for a worker is a wait on the page too, its processing is not.
	wctx, wadd := tr.Start(hctx, tracing.SpanWorkqueueAdd)
	qctx, wq := tr.Start(wctx, tracing.SpanWorkqueueQueued)
	_, proc := tr.Start(qctx, tracing.SpanWorkqueueProcess)
	proc.End()
	wq.End()
	wadd.End()
	hd.End()
	root.End()

	wf, ok := store.Waterfall(root.SpanContext().TraceID())
	require.True(t, ok)
	byName := map[string]WaterfallSpan{}
	for _, s := range wf.Spans {
		byName[s.Name] = s
	}
	require.Len(t, byName, 8)
	for name, wait := range map[string]bool{tracing.SpanRootPrefix + "watch": false, tracing.SpanRealFIFOQueued: true,
		tracing.SpanHandleDeltas: false, tracing.SpanAddCh: true, tracing.SpanPop: true,
		tracing.SpanWorkqueueAdd: false, tracing.SpanWorkqueueQueued: true, tracing.SpanWorkqueueProcess: false} {
		assert.Equal(t, wait, byName[name].Wait, "%s is a wait: %v", name, wait)
	}
	assert.Equal(t, "event.type=ADDED object.key=demo/web-1", byName[tracing.SpanRootPrefix+"watch"].AttrText)
	assert.Equal(t, "", byName[tracing.SpanRealFIFOQueued].AttrText, "informer.name alone shows nothing")
	assert.Equal(t, "listener=*demo.fast#1 k8s.namespace.name=demo", byName[tracing.SpanAddCh].AttrText,
		"by full key, as the page drew them from the JSON map; test/browser reads listener= off the addCh row")
	assert.Equal(t, "pods", byName[tracing.SpanRealFIFOQueued].Attrs[string(tracing.KeyInformerName)], "Attrs still has every attribute")
}

// A root's link to the span its object's tracing.k8s.io/traceparent names
// carries the page's words for it: the annotation names the span as the
// writer, unverified (anyone who can write the object can name any span),
// never "written by". The cycle's link carries no such note.
func TestWriterLinkSaysTheAnnotationNamesIt(t *testing.T) {
	store := NewSpanStore(10)
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(store)).Tracer("test")
	_, named := tr.Start(context.Background(), tracing.SpanWorkqueueProcess)
	named.End()
	_, cycle := tr.Start(context.Background(), tracing.SpanListAndWatchCycle)
	cycle.End()
	_, root := tr.Start(context.Background(), tracing.SpanRootPrefix+"watch", trace.WithLinks(
		trace.Link{SpanContext: cycle.SpanContext()},
		trace.Link{SpanContext: named.SpanContext(), Attributes: []attribute.KeyValue{tracing.KeyLinkAnnotation.String(tracing.AnnotationTraceparent)}},
	))
	root.End()

	wf, ok := store.Waterfall(root.SpanContext().TraceID())
	require.True(t, ok)
	require.Len(t, wf.Spans, 1)
	require.Len(t, wf.Spans[0].Links, 2)
	cycleLink, writerLink := wf.Spans[0].Links[0], wf.Spans[0].Links[1]
	assert.True(t, writerLink.Writer)
	assert.Contains(t, writerLink.Note, "annotation "+tracing.AnnotationTraceparent+" names this span as its writer (unverified")
	assert.NotContains(t, strings.ToLower(writerLink.Note), "written by")
	assert.Empty(t, cycleLink.Note, "the cycle's link is no claim of the object's")
}

// The page never says a span wrote an object: the link is the object's
// annotation's claim, and the page shows the server's note (WriterNote)
// for it.
func TestPageNeverSaysWrittenBy(t *testing.T) {
	for _, name := range []string{"app.js", "index.html"} {
		src, err := os.ReadFile(filepath.Join("assets", name))
		require.NoError(t, err)
		assert.False(t, strings.Contains(strings.ToLower(string(src)), "written by"), "%s says a span wrote the object; the annotation only names it", name)
	}
	src, err := os.ReadFile(filepath.Join("assets", "app.js"))
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(src), "${l.note}"), "app.js shows the server's note on a writer link")
}

// What the page shows of a span is valid UTF-8 and bounded, whoever made
// the span: the store keeps a user's own spans too, whose names and
// attributes nothing else made safe.
func TestPageShowsEveryValueSafe(t *testing.T) {
	store := NewSpanStore(10)
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(store)).Tracer("test")
	hostile := "ns/\xff\x1b[2J" + strings.Repeat("k", 200<<10)
	ctx, root := tr.Start(context.Background(), tracing.SpanRootPrefix+"watch", trace.WithAttributes(
		tracing.KeyObjectKey.String(hostile), tracing.KeyEventType.String("ADDED"), tracing.KeyResourceVersion.String("7\xc3")))
	_, mine := tr.Start(ctx, "reconcile "+hostile, trace.WithAttributes(attribute.String("mine", hostile)))
	mine.End()
	_, proc := tr.Start(ctx, tracing.SpanWorkqueueProcess, trace.WithAttributes(tracing.KeyWorkqueueKey.String(hostile), tracing.KeyWorkqueueName.String("q\xff")))
	proc.End()
	root.End()

	safe := func(what, s string) {
		t.Helper()
		assert.True(t, utf8.ValidString(s), "%s: %.40q", what, s)
		assert.LessOrEqual(t, len(s), tracing.MaxValueBytes, "%s", what)
		assert.False(t, strings.ContainsFunc(s, unicode.IsControl), "%s: %.40q", what, s)
	}
	events := store.Events(10)
	require.Len(t, events, 1)
	safe("event key", events[0].Key)
	safe("event rv", events[0].ResourceVersion)
	rs := store.Reconciles(10)
	require.Len(t, rs, 1)
	safe("reconcile key", rs[0].Key)
	safe("reconcile queue", rs[0].Queue)
	wf, ok := store.Waterfall(root.SpanContext().TraceID())
	require.True(t, ok)
	require.Len(t, wf.Spans, 3)
	for _, s := range wf.Spans {
		safe("span name", s.Name)
		for k, v := range s.Attrs {
			safe(k, v)
		}
		assert.True(t, utf8.ValidString(s.AttrText), s.Name)
	}
}
