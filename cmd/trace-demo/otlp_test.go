package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is a minimal OTLP/HTTP trace endpoint: it decodes every
// export request and counts the spans by name.
type otlpReceiver struct {
	mu    sync.Mutex
	spans map[string]int
	total int
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	req := &collectortrace.ExportTraceServiceRequest{}
	if err == nil && r.URL.Path == "/v1/traces" {
		err = proto.Unmarshal(body, req)
	}
	if err != nil || r.URL.Path != "/v1/traces" {
		http.Error(w, fmt.Sprintf("bad request to %s: %v", r.URL.Path, err), http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				o.spans[s.Name]++
				o.total++
			}
		}
	}
	o.mu.Unlock()
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// --exporter otlp sends every span to OTEL_EXPORTER_OTLP_ENDPOINT: as many
// as the demo reports, with the contract's names.
func TestOTLPExporterSendsEverySpanToTheEndpoint(t *testing.T) {
	recv := &otlpReceiver{spans: map[string]int{}}
	srv := httptest.NewServer(recv)
	t.Cleanup(srv.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)

	r := runDemo(t, context.Background(), "--scenario", "basic", "--exporter", "otlp")
	require.Equal(t, 0, r.code, r.stderr)
	recv.mu.Lock()
	defer recv.mu.Unlock()
	assert.Contains(t, r.stdout, fmt.Sprintf("\n%d spans sent by OTLP/HTTP to %s", recv.total, srv.URL))
	for _, name := range []string{"ListAndWatch watch", "RealFIFO.queued", "RealFIFO.ReplacedAll", "HandleDeltas", "distribute", "addCh", "pop", "nextCh", "OnUpdate", "Reflector.ListAndWatch"} {
		assert.Positive(t, recv.spans[name], name)
	}
}

// An endpoint that is down costs at most flushTimeout, and says so.
func TestOTLPEndpointDownIsReportedNotWaitedOn(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
	old := flushTimeout
	flushTimeout = 500 * time.Millisecond
	t.Cleanup(func() { flushTimeout = old })

	r := runDemo(t, context.Background(), "--scenario", "basic", "--exporter", "otlp", "--quiet")
	assert.Equal(t, 1, r.code)
	assert.True(t, strings.HasPrefix(r.stderr, "trace-demo: exporting spans failed:"), r.stderr)
	assert.Contains(t, r.stderr, "OTEL_EXPORTER_OTLP_ENDPOINT")
	assert.NotContains(t, r.stdout, "spans sent", "no claim that lost spans were sent")
}

// A garbage endpoint is refused before anything runs: the SDK would ignore
// it and send to its own default, which the user never named.
func TestGarbageOTLPEndpointIsRefused(t *testing.T) {
	for _, v := range []string{"::not a url", "localhost:4318", "ftp://collector:4318"} {
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", v)
		r := runDemo(t, context.Background(), "--scenario", "basic", "--exporter", "otlp")
		assert.Equal(t, 2, r.code, v)
		assert.Contains(t, r.stderr, fmt.Sprintf("OTEL_EXPORTER_OTLP_ENDPOINT=%q is not an http:// or https:// URL with a host", v))
		assert.Empty(t, r.stdout, "nothing ran")
	}
}

// The destination the demo names is the one it gives the SDK: the base
// endpoint plus /v1/traces, the per-signal one as it is, and with neither
// the demo's plain-HTTP default (the SDK's own would be https).
func TestOTLPDestinationIsTheURLTheExporterPostsTo(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "http://localhost:4318/v1/traces"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://otel.example:4318"}, "https://otel.example:4318/v1/traces"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/base/"}, "http://c:4318/base/v1/traces"},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/custom", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://other"}, "http://c:4318/custom"},
	} {
		got, _, err := otlpDestination(env(c.env))
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%v", c.env)
	}

	// End to end: a receiver that only answers on the named path gets every
	// span, and the demo names that URL.
	recv := &otlpReceiver{spans: map[string]int{}}
	srv := httptest.NewServer(recv)
	t.Cleanup(srv.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", srv.URL+"/v1/traces")
	r := runDemo(t, context.Background(), "--scenario", "basic", "--exporter", "otlp", "--quiet")
	require.Equal(t, 0, r.code, r.stderr)
	recv.mu.Lock()
	defer recv.mu.Unlock()
	assert.Contains(t, r.stdout, fmt.Sprintf("%d spans sent by OTLP/HTTP to %s/v1/traces (from OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)", recv.total, srv.URL))
}
