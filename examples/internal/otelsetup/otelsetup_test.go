package otelsetup

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
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

// A collector that refuses an export with a 2 MB answer, through the real
// OTLP exporter and batch processor: ErrorHandler writes it as one line,
// cut (as cmd/trace-demo cuts an exporter's error) and saying how much was
// left out, where OpenTelemetry's default handler would log all 2 MB.
func TestErrorHandlerCutsACollectorsAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "refused: "+strings.Repeat("\x1b[2J"+"y", 2<<20/5), http.StatusBadRequest)
	}))
	defer srv.Close()
	previous := otel.GetErrorHandler()
	defer otel.SetErrorHandler(previous)
	var mu sync.Mutex
	var buf bytes.Buffer
	otel.SetErrorHandler(ErrorHandler(lockedWriter{&mu, &buf}))

	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(srv.URL+"/v1/traces"),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	require.NoError(t, err)
	// The batch processor's own timer exports (and hands the error to
	// otel.Handle); ForceFlush would return it instead.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(10*time.Millisecond)))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	_, span := tp.Tracer("test").Start(context.Background(), "a span")
	span.End()
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return buf.Len() > 0
	}, 30*time.Second, 10*time.Millisecond, "the failed export reached the handler")

	mu.Lock()
	defer mu.Unlock()
	out := buf.String()
	for _, line := range strings.SplitAfter(strings.TrimSuffix(out, "\n"), "\n") {
		assert.Less(t, len(line), 512, "a line of %d bytes: %.80q…", len(line), line)
		assert.True(t, strings.HasPrefix(line, "opentelemetry: "), "%.80q", line)
		assert.Contains(t, line, "more bytes)", "the line says it was cut")
		assert.NotContains(t, line, "\x1b", "no control character reaches the log")
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestSamplerFromTheEnvironmentLetsTheWriterDecide: the provider Install
// sets samples as OTEL_TRACES_SAMPLER says, wrapped so that a root linked
// to the writer its object names follows the writer's decision: at a ratio
// of 0 a root with no writer is dropped and one whose writer was sampled
// is kept, and at 1 one whose writer was not sampled is dropped.
func TestSamplerFromTheEnvironmentLetsTheWriterDecide(t *testing.T) {
	writer := func(sampled bool) trace.SpanStartOption {
		var flags trace.TraceFlags
		if sampled {
			flags = trace.FlagsSampled
		}
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: flags})
		return trace.WithLinks(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{
			tracing.KeyLinkAnnotation.String(tracing.AnnotationTraceparent)}})
	}
	sampled := func(opts ...trace.SpanStartOption) bool {
		_, span := otel.Tracer("test").Start(context.Background(), "ListAndWatch watch", opts...)
		defer span.End()
		return span.SpanContext().IsSampled()
	}
	for _, tc := range []struct {
		ratio                          string
		noWriter, writerKept, writerNo bool
	}{
		{"0", false, true, false},
		{"1", true, true, false},
	} {
		t.Setenv("OTEL_TRACES_SAMPLER", "parentbased_traceidratio")
		t.Setenv("OTEL_TRACES_SAMPLER_ARG", tc.ratio)
		shutdown, err := Install(context.Background(), "stdout", "test", io.Discard)
		require.NoError(t, err)
		require.Equal(t, tc.noWriter, sampled(), "ratio %s, no writer", tc.ratio)
		require.Equal(t, tc.writerKept, sampled(writer(true)), "ratio %s, writer kept", tc.ratio)
		require.Equal(t, tc.writerNo, sampled(writer(false)), "ratio %s, writer dropped", tc.ratio)
		require.NoError(t, shutdown(context.Background()))
	}
}

// TestAMisspeltSamplerIsAnError: where the SDK would log and record every
// span, Install refuses, naming what it accepts.
func TestAMisspeltSamplerIsAnError(t *testing.T) {
	for env, want := range map[[2]string]string{
		{"parentbased_traceid_ratio", ""}:  "is not a sampler this program knows: want parentbased_traceidratio",
		{"parentbased_traceidratio", "1%"}: `OTEL_TRACES_SAMPLER_ARG="1%": want a ratio from 0 to 1`,
		{"traceidratio", "2"}:              "want a ratio from 0 to 1",
	} {
		t.Setenv("OTEL_TRACES_SAMPLER", env[0])
		t.Setenv("OTEL_TRACES_SAMPLER_ARG", env[1])
		_, err := Install(context.Background(), "stdout", "test", io.Discard)
		require.ErrorContains(t, err, want, "%v", env)
	}
	upper, err := Sampler(func(k string) string {
		return map[string]string{"OTEL_TRACES_SAMPLER": " ParentBased_TraceIDRatio ", "OTEL_TRACES_SAMPLER_ARG": " 0.5 "}[k]
	})
	require.NoError(t, err, "read as the SDK reads it: trimmed, any case")
	require.Equal(t, "LinkAwareSampler{"+sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.5)).Description()+"}", upper.Description())
	s, err := Sampler(func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, "LinkAwareSampler{"+sdktrace.ParentBased(sdktrace.AlwaysSample()).Description()+"}", s.Description(),
		"unset: the SDK's default, wrapped")
}
