package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
)

// MaxCollected bounds the spans kept in memory for the waterfall, so that a
// long run against a busy cluster cannot grow without limit. Spans past it
// still go to the exporter; the summary says how many the waterfall missed.
const MaxCollected = 500_000

// UICollected is the bound with --ui, where the page (liveview.SpanStore)
// is the viewer and the collector only feeds the closing summary: the
// page's window and MaxCollected spans besides would keep the same spans
// twice, hundreds of megabytes, for a summary of the run's first minutes.
const UICollected = 100_000

// Collector keeps every ended span for the waterfall and summary. It is a
// SpanProcessor of its own, beside the exporter's, so the terminal shows
// the very spans that were exported.
//
// Past its limit a trace is whole or absent in the snapshot: a trace with
// spans kept before the limit and spans dropped after it would read as a
// broken contract ("lost: no queue wait span and no HandleDeltas") when
// only the Collector had run out of room, and the demo would exit 1.
type Collector struct {
	Limit int // maxCollected when 0; set before the first span

	mu      sync.Mutex
	spans   []spancheck.Span // guarded by mu
	dropped int              // guarded by mu
	// traces are the trace IDs in spans, built when the limit is first
	// reached; cut are those of them that lost a span to the limit, left
	// out of snapshot. Both guarded by mu; neither grows past the kept
	// traces.
	traces map[trace.TraceID]bool
	cut    map[trace.TraceID]bool
}

func (c *Collector) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (c *Collector) OnEnd(s sdktrace.ReadOnlySpan) {
	limit := c.Limit
	if limit == 0 {
		limit = MaxCollected
	}
	c.mu.Lock()
	full := len(c.spans) >= limit
	if full {
		c.drop_locked(s.SpanContext().TraceID())
	}
	c.mu.Unlock()
	if full {
		return // not converted: past the limit most spans are dropped
	}
	sp := spancheck.FromReadOnly(s) // outside the lock: OnEnd runs on every traced goroutine
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.traces != nil {
		// The limit was reached while sp was converted: sp's trace may be
		// unknown to traces, and keeping sp could leave it partial.
		c.drop_locked(sp.TraceID)
		return
	}
	c.spans = append(c.spans, sp)
}

// drop_locked counts a span past the limit and marks its trace cut if
// spans of it are kept.
func (c *Collector) drop_locked(id trace.TraceID) {
	c.dropped++
	if c.traces == nil {
		c.traces, c.cut = map[trace.TraceID]bool{}, map[trace.TraceID]bool{}
		for i := range c.spans {
			c.traces[c.spans[i].TraceID] = true
		}
	}
	if c.traces[id] {
		c.cut[id] = true
	}
}
func (c *Collector) Shutdown(context.Context) error   { return nil }
func (c *Collector) ForceFlush(context.Context) error { return nil }

// Snapshot returns the kept spans of the traces kept whole, and how many
// spans the limit took (including the kept spans of cut traces).
func (c *Collector) Snapshot() (spans []spancheck.Span, dropped int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.cut) == 0 {
		return append([]spancheck.Span(nil), c.spans...), c.dropped
	}
	dropped = c.dropped
	for _, sp := range c.spans {
		if c.cut[sp.TraceID] {
			dropped++
			continue
		}
		spans = append(spans, sp)
	}
	return spans, dropped
}

// Full reports whether the limit was reached: spans since are not kept.
func (c *Collector) Full() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.traces != nil
}

func (c *Collector) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.spans) + c.dropped
}

// Telemetry is the demo's tracer provider: every span sampled, kept by the
// collector and sent to the chosen exporter through an exportQueue, which
// drops (and counts) what the exporter cannot keep up with rather than
// make the informer wait.
type Telemetry struct {
	TP        *sdktrace.TracerProvider
	Collector *Collector
	Where     string // what the exporter writes to, for the closing message
	closeOut  func() error
	outPath   string      // the --out file, if the exporter writes one through outTmp
	outTmp    string      // the temporary file the spans go to until Shutdown (openOut)
	outMode   os.FileMode // the mode of the --out file replaced, 0 if new
	exporter  *countingExporter
	queue     *exportQueue // nil with --exporter none
}

// Dropped is how many spans the export queue Dropped because it was full.
func (t *Telemetry) Dropped() int64 {
	if t.queue == nil {
		return 0
	}
	return t.queue.Dropped()
}

// DroppedNote is the line that says so, "" when none was dropped.
func (t *Telemetry) DroppedNote() string {
	n := t.Dropped()
	if n == 0 {
		return ""
	}
	what := fmt.Sprintf("%d spans were", n)
	if n == 1 {
		what = "1 span was"
	}
	return fmt.Sprintf("%s not exported: the exporter could not keep up and its queue of %d was full; tracing drops spans rather than slow the informer (the waterfalls and the summary still have them)",
		what, exportQueueSize)
}

// countingExporter counts what its exporter accepted and keeps the first
// error. The batch processor hands export errors to otel.Handle (a log line
// at best) and its Shutdown does not return them, so without this a demo
// whose endpoint is down would report spans "sent" that never arrived.
type countingExporter struct {
	sdktrace.SpanExporter
	mu       sync.Mutex
	exported int   // guarded by mu
	failed   int   // guarded by mu
	firstErr error // guarded by mu
}

func (c *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := c.SpanExporter.ExportSpans(ctx, spans)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.failed += len(spans)
		if c.firstErr == nil {
			c.firstErr = err
		}
		return err
	}
	c.exported += len(spans)
	return nil
}

func New(ctx context.Context, exporter, out string, stdout io.Writer) (*Telemetry, error) {
	t := &Telemetry{Collector: &Collector{}, closeOut: func() error { return nil }}
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithSpanProcessor(t.Collector),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("trace-demo"))),
	}
	switch exporter {
	case "none":
		t.Where = "recorded, none written: --out spans.json keeps them (stdouttrace JSON), --exporter otlp sends them to a trace viewer"
	case "stdout":
		w := stdout
		t.Where = "written to stdout"
		if out != "-" {
			f, err := t.openOut(out)
			if err != nil {
				return nil, err
			}
			w = f
			t.Where = "written to " + out + " (stdouttrace JSON, one object per span)"
		}
		exp, err := stdouttrace.New(stdouttrace.WithWriter(w))
		if err != nil {
			return nil, err
		}
		t.exporter = &countingExporter{SpanExporter: exp}
		t.queue = NewExportQueue(t.exporter)
		opts = append(opts, sdktrace.WithSpanProcessor(t.queue))
	case "otlp":
		dest, why, err := OTLPDestination(os.Getenv)
		if err != nil {
			return nil, err
		}
		// The demo hands the SDK the very URL it names, so the closing
		// message can never name a destination the exporter does not use.
		// Headers, certificates, timeouts: the SDK still reads the
		// standard variables for those.
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(dest))
		if err != nil {
			return nil, tidy(fmt.Errorf("otlp exporter: %w", err))
		}
		// Printed, so masked: the URL may carry credentials.
		t.Where = "sent by OTLP/HTTP to " + MaskURL(dest) + " (" + why + ")"
		t.exporter = &countingExporter{SpanExporter: exp}
		t.queue = NewExportQueue(t.exporter)
		opts = append(opts, sdktrace.WithSpanProcessor(t.queue))
	default:
		return nil, fmt.Errorf("--exporter %q: want stdout, otlp or none", exporter)
	}
	t.TP = sdktrace.NewTracerProvider(opts...)
	return t, nil
}

// DefaultOTLPURL is where the demo sends OTLP/HTTP when no endpoint
// variable is set. otlptracehttp's own default is https://localhost:4318
// (it is secure unless told otherwise), but the collectors a reader starts
// on localhost (Jaeger all-in-one, otel-collector) listen on plain HTTP
// there: the demo chooses http, and says so.
const DefaultOTLPURL = "http://localhost:4318/v1/traces"

// OTLPDestination is the URL the spans are sent to, from the standard
// variables as the OTLP/HTTP exporter reads them: the per-signal
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else
// OTEL_EXPORTER_OTLP_ENDPOINT plus /v1/traces, else defaultOTLPURL; and why.
// A value that is not an http(s) URL with a host is refused: the SDK would
// log it and fall back to its default, and the spans would go somewhere the
// user never named.
func OTLPDestination(getenv func(string) string) (dest, why string, err error) {
	for _, v := range []struct {
		name   string
		append bool
	}{{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", false}, {"OTEL_EXPORTER_OTLP_ENDPOINT", true}} {
		raw := strings.TrimSpace(getenv(v.name))
		if raw == "" {
			continue
		}
		u, perr := url.Parse(raw)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", "", fmt.Errorf("%s=%q is not an http:// or https:// URL with a host (for example http://localhost:4318); fix or unset it", v.name, MaskURL(raw))
		}
		if v.append {
			u.Path = path.Join("/", u.Path, "v1/traces")
		} else if u.Path == "" {
			u.Path = "/"
		}
		return u.String(), "from " + v.name, nil
	}
	return DefaultOTLPURL, "OTEL_EXPORTER_OTLP_ENDPOINT is not set: the demo's default, plain HTTP for a local collector", nil
}

// Shutdown flushes every queued span to the exporter. An OTLP endpoint
// that is not listening, or never answers, must not hang the demo: ctx
// bounds it, and the error says how many spans did not arrive. Spans the
// queue dropped during the run are not an error (droppedNote says so).
// The error is one line, cut to MaxMessage, with any URL's secrets masked:
// a collector's answer may be megabytes, and the endpoint may carry a
// token. --out is put in place here, if the run wrote a span to it.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	return tidy(t.shutdown(ctx))
}

func (t *Telemetry) shutdown(ctx context.Context) error {
	err := t.TP.Shutdown(ctx)
	if cerr := t.closeOut(); err == nil {
		err = cerr
	}
	if perr := t.placeOut(); err == nil {
		err = perr
	}
	if t.exporter == nil {
		return err
	}
	t.exporter.mu.Lock()
	defer t.exporter.mu.Unlock()
	recorded := t.Collector.Count()
	queued := recorded - int(t.Dropped())
	if t.exporter.firstErr != nil {
		return fmt.Errorf("%d of %d spans were not exported: %w", queued-t.exporter.exported, queued, t.exporter.firstErr)
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%d of %d spans were not exported: the exporter did not take them in time (%w)", queued-t.exporter.exported, queued, err)
		}
		return err
	}
	if t.exporter.exported != queued {
		return fmt.Errorf("the exporter took %d spans of the %d recorded (%d dropped)", t.exporter.exported, recorded, t.Dropped())
	}
	return nil
}
