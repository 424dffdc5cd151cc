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
	for _, name := range []string{"ListAndWatch watch", "DeltaFIFO.queued", "HandleDeltas", "distribute", "addCh", "pop", "nextCh", "OnUpdate", "Reflector.ListAndWatch"} {
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
