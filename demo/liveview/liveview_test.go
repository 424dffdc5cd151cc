package liveview

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// Every asset is in the binary and names no other host: the page works
// offline. A src or href is relative, and no file holds a URL with a scheme
// or a protocol-relative one.
func TestAssetsAreEmbeddedAndReferenceNoExternalURL(t *testing.T) {
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|(src|href)\s*=\s*["']?(https?:|//)|@import|url\(`)
	n := 0
	assets := livepage.Assets()
	require.NoError(t, fs.WalkDir(assets, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(assets, path)
		require.NoError(t, err)
		// An SVG's xmlns names its namespace; nothing is fetched from it.
		text := strings.ReplaceAll(string(b), `xmlns="http://www.w3.org/2000/svg"`, "")
		assert.Empty(t, external.FindAllString(text, -1), path)
		n++
		return nil
	}))
	assert.Equal(t, 4, n, "index.html, app.js, app.css, favicon.svg")

	srv := httptest.NewServer(NewServer(Options{Pipeline: func() Pipeline { return Pipeline{} }, Spans: NewSpanStore(1),
		Controls: func() ([]Control, string) { return nil, "none here" }}))
	defer srv.Close()
	page := get(t, srv.URL+"/")
	for _, ref := range regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		assert.NotEmpty(t, get(t, srv.URL+"/"+ref[1]), ref[1])
	}
	assert.Contains(t, page, `src="app.js"`)
	assert.Contains(t, page, `href="app.css"`)
}

func get(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, url)
	return string(b)
}

// The store keeps the last maxTraces traces and evicts the oldest whole;
// Events lists the newest first, only traces whose per-object root ended.
func TestSpanStoreIsBounded(t *testing.T) {
	st := NewSpanStore(10)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(st))
	tr := tp.Tracer("test")
	var ids []trace.TraceID
	for i := range 25 {
		ctx, root := tr.Start(context.Background(), tracing.SpanRootPrefix+"watch")
		root.SetAttributes(tracing.KeyObjectKey.String(fmt.Sprint("ns/p", i)), tracing.KeyEventType.String("ADDED"))
		// The root ends first, as the informer's does (when the change is
		// queued): a trace whose first span to end has a parent is a
		// fragment, which never pushes out a whole trace.
		root.End()
		_, h := tr.Start(ctx, "OnAdd")
		h.End()
		ids = append(ids, root.SpanContext().TraceID())
	}
	kept, evicted := st.Counts()
	assert.Equal(t, 10, kept)
	assert.Equal(t, 15, evicted)
	ev := st.Events(4)
	require.Len(t, ev, 4)
	assert.Equal(t, "ns/p24", ev[0].Key)
	assert.Equal(t, "ns/p21", ev[3].Key)
	assert.Equal(t, 1, ev[0].HandlerCalls)
	_, ok := st.Trace(ids[0])
	assert.False(t, ok, "the oldest trace was evicted")
	spans, ok := st.Trace(ids[24])
	require.True(t, ok)
	assert.Len(t, spans, 2)
	assert.Len(t, st.Events(100), 10)
}

func TestListenWarnsOffLoopback(t *testing.T) {
	for addr, warn := range map[string]bool{"127.0.0.1:0": false, "localhost:0": false, "[::1]:0": false, "0.0.0.0:0": true} {
		ln, url, w, err := Listen(addr)
		if err != nil && strings.Contains(addr, "::1") {
			continue // no IPv6 loopback here
		}
		require.NoError(t, err, addr)
		ln.Close()
		assert.Equal(t, warn, w != "", "%s: %q", addr, w)
		assert.True(t, strings.HasPrefix(url, "http://"), url)
	}
}

// The store's spans are bounded too, not only its traces: a trace's spans
// grow with the informer's listeners (about five each), and 5,000 traces
// of 60 listeners held 1.6 GB. Traces of 60 spans in a store of 10 traces
// (250 spans) keep the newest four whole.
func TestSpanStoreBoundsItsSpansWhateverTheTracesSize(t *testing.T) {
	st := NewSpanStore(10)
	require.Equal(t, 10*SpansPerTrace, st.MaxSpans())
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(st))
	tr := tp.Tracer("test")
	var ids []trace.TraceID
	for i := range 25 {
		ctx, root := tr.Start(context.Background(), tracing.SpanRootPrefix+"watch")
		root.SetAttributes(tracing.KeyObjectKey.String(fmt.Sprint("ns/p", i)), tracing.KeyEventType.String("MODIFIED"))
		root.End() // first, as the informer's (see TestSpanStoreIsBounded)
		for range 59 {
			_, h := tr.Start(ctx, "OnUpdate")
			h.End()
		}
		ids = append(ids, root.SpanContext().TraceID())
	}
	total := 0
	for _, id := range ids {
		spans, ok := st.Trace(id)
		if ok {
			assert.Len(t, spans, 60, "a kept trace is whole")
		}
		total += len(spans)
	}
	assert.LessOrEqual(t, total, st.MaxSpans())
	assert.Equal(t, 240, total, "the newest four traces whole")
	kept, evicted := st.Counts()
	assert.Equal(t, 4, kept)
	assert.Equal(t, 21, evicted)
	ev := st.Events(100)
	require.Len(t, ev, 4)
	assert.Equal(t, "ns/p24", ev[0].Key)
	assert.Equal(t, 59, ev[0].HandlerCalls)
}
