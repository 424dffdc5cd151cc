package otelsetup

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// With no endpoint variable, --exporter otlp posts to the default URL,
// path included: a collector takes traces at /v1/traces only.
func TestOTLPPostsToV1Traces(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	previous := otel.GetTracerProvider()
	defer otel.SetTracerProvider(previous)

	shutdown, err := install(context.Background(), "otlp", "test", nil, srv.URL+defaultOTLPURL[len("http://localhost:4318"):])
	require.NoError(t, err)
	_, span := otel.Tracer("test").Start(context.Background(), "a span")
	span.End()
	require.NoError(t, shutdown(context.Background()))
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"/v1/traces"}, paths)
}

// stdout writes the spans to the writer; none installs nothing; anything
// else is refused.
func TestStdoutNoneAndUnknown(t *testing.T) {
	previous := otel.GetTracerProvider()
	defer otel.SetTracerProvider(previous)

	var buf bytes.Buffer
	shutdown, err := Install(context.Background(), "stdout", "test", &buf)
	require.NoError(t, err)
	_, span := otel.Tracer("test").Start(context.Background(), "a span")
	span.End()
	require.NoError(t, shutdown(context.Background()))
	require.Contains(t, buf.String(), `"Name":"a span"`)

	installed := otel.GetTracerProvider()
	shutdown, err = Install(context.Background(), "none", "test", &buf)
	require.NoError(t, err)
	require.NoError(t, shutdown(context.Background()))
	require.Same(t, installed, otel.GetTracerProvider(), "none leaves the provider as it was")

	_, err = Install(context.Background(), "jaeger", "test", &buf)
	require.ErrorContains(t, err, `want stdout, otlp or none`)
}

// none with a span processor (the live view's): a provider that feeds it
// alone.
func TestNoneWithAProcessor(t *testing.T) {
	previous := otel.GetTracerProvider()
	defer otel.SetTracerProvider(previous)
	rec := tracetest.NewSpanRecorder()
	shutdown, err := Install(context.Background(), "none", "test", nil, rec)
	require.NoError(t, err)
	_, span := otel.Tracer("test").Start(context.Background(), "a span")
	span.End()
	require.NoError(t, shutdown(context.Background()))
	require.Len(t, rec.Ended(), 1)
	require.Equal(t, "a span", rec.Ended()[0].Name())
}
