// Package otelsetup installs the global TracerProvider the examples trace
// with: dropin's informers and queues use the global provider unless told
// otherwise, so installing one is all a program does to see its traces.
package otelsetup

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/informer-anatomy/informer-anatomy/demo/telemetry"
	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// ErrorHandler is the OpenTelemetry error handler the examples install
// (otel.SetErrorHandler): each error the SDK reports (an export that
// failed, a span queue that was full) becomes one line on w, cut as
// cmd/trace-demo cuts an exporter's error (demo/telemetry's OneLine, at
// telemetry.MaxMessage bytes, saying how much was left out) with any
// URL's userinfo and query masked (telemetry.MaskURLs), and with no
// invalid byte or control character. OpenTelemetry's
// default handler logs the error whole: a collector that answers an
// export with a 2 MB body makes a 2 MB log line, once per failed batch.
//
// Ours.
func ErrorHandler(w io.Writer) otel.ErrorHandler {
	var mu sync.Mutex
	return otel.ErrorHandlerFunc(func(err error) {
		if err == nil {
			return
		}
		// Masked before it is cut, so that no cut leaves half a secret
		// unmasked; then made valid UTF-8 without control characters
		// (tracing.Value), so that a peer's bytes cannot rewrite the
		// terminal the log is read on.
		line := "opentelemetry: " + tracing.Value(telemetry.OneLine(telemetry.MaskURLs(err.Error()))) + "\n"
		mu.Lock()
		defer mu.Unlock()
		_, _ = io.WriteString(w, line)
	})
}

// Install sets the global TracerProvider for exporter: "stdout" (one JSON
// object per span on w), "otlp" (OTLP over HTTP to
// OTEL_EXPORTER_OTLP_ENDPOINT, default http://localhost:4318) or "none"
// (no provider: tracing off, at no cost). shutdown flushes what is
// buffered; call it before exiting. Spans the exporter cannot take in time
// are dropped by the batch processor, never waited for. processors (the
// live view's dropin.LiveViewSpanProcessor) get every span too, with any
// exporter: with "none" and processors, the provider has those alone.
func Install(ctx context.Context, exporter, service string, w io.Writer, processors ...sdktrace.SpanProcessor) (shutdown func(context.Context) error, err error) {
	return install(ctx, exporter, service, w, defaultOTLPURL, processors...)
}

// defaultOTLPURL is where OTLP goes when no endpoint variable is set: a
// collector on this machine (Jaeger all-in-one, otel-collector) listens on
// plain HTTP at 4318, and takes traces at /v1/traces. WithEndpointURL uses
// the URL's path as it is, so a URL without the path would post to "/",
// which collectors answer with 404.
const defaultOTLPURL = "http://localhost:4318/v1/traces"

func install(ctx context.Context, exporter, service string, w io.Writer, defaultURL string, processors ...sdktrace.SpanProcessor) (shutdown func(context.Context) error, err error) {
	var exp sdktrace.SpanExporter
	switch exporter {
	case "none", "":
		if len(processors) > 0 {
			break
		}
		return func(context.Context) error { return nil }, nil
	case "stdout":
		exp, err = stdouttrace.New(stdouttrace.WithWriter(w))
	case "otlp":
		opts := []otlptracehttp.Option{}
		if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(defaultURL))
		}
		exp, err = otlptracehttp.New(ctx, opts...)
	default:
		return nil, fmt.Errorf("--exporter %q: want stdout, otlp or none", exporter)
	}
	if err != nil {
		return nil, fmt.Errorf("--exporter %s: %w", exporter, err)
	}
	sampler, err := Sampler(os.Getenv)
	if err != nil {
		return nil, err
	}
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(service))),
		sdktrace.WithSampler(sampler),
	}
	if exp != nil {
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	for _, p := range processors {
		opts = append(opts, sdktrace.WithSpanProcessor(p))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	otel.SetTracerProvider(tp)
	return tp.Shutdown, nil
}

// Sampler is the sampler the OpenTelemetry SDK builds from
// OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (read through getenv;
// unset: parentbased_always_on, the SDK's default), wrapped in
// dropin.LinkAwareSampler, so that a change another controller wrote is
// kept here exactly when the writer's span was kept there, at any ratio
// (docs/07-your-controller.md, "From one controller to the next"). Set the
// ratio as for any OpenTelemetry program:
//
//	OTEL_TRACES_SAMPLER=parentbased_traceidratio OTEL_TRACES_SAMPLER_ARG=0.01
//
// Where the SDK (v1.47, samplerFromEnv) hands an unknown name or a bad
// ratio to otel.Handle and goes on recording every span (its default
// sampler, or a ratio of 1), this returns an error that names the
// accepted values: a controller started with a misspelt sampler should not
// record every span while its author believes it records one in a
// hundred.
func Sampler(getenv func(string) string) (sdktrace.Sampler, error) {
	// Read as the SDK reads them (sdk/trace/sampler_env.go,
	// samplerFromEnv): the name trimmed and in lower case, the argument
	// trimmed.
	name := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
	ratio := func() (float64, error) {
		if arg == "" {
			return 1, nil // the SDK's default ratio
		}
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return 0, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%q: want a ratio from 0 to 1, such as 0.01", arg)
		}
		return r, nil
	}
	var inner sdktrace.Sampler
	switch name {
	case "", "parentbased_always_on":
		inner = sdktrace.ParentBased(sdktrace.AlwaysSample())
	case "parentbased_always_off":
		inner = sdktrace.ParentBased(sdktrace.NeverSample())
	case "parentbased_traceidratio", "traceidratio":
		r, err := ratio()
		if err != nil {
			return nil, err
		}
		inner = sdktrace.TraceIDRatioBased(r)
		if name == "parentbased_traceidratio" {
			inner = sdktrace.ParentBased(inner)
		}
	case "always_on":
		inner = sdktrace.AlwaysSample()
	case "always_off":
		inner = sdktrace.NeverSample()
	default:
		return nil, fmt.Errorf("OTEL_TRACES_SAMPLER=%q is not a sampler this program knows: want parentbased_traceidratio "+
			"(with OTEL_TRACES_SAMPLER_ARG, e.g. 0.01), parentbased_always_on (the default), parentbased_always_off, "+
			"traceidratio, always_on or always_off", name)
	}
	return dropin.LinkAwareSampler(inner), nil
}
