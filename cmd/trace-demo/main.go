package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	"github.com/informer-anatomy/informer-anatomy/demo/cluster"
	"github.com/informer-anatomy/informer-anatomy/demo/informers"
	"github.com/informer-anatomy/informer-anatomy/demo/lessons"
	"github.com/informer-anatomy/informer-anatomy/demo/livecontrols"
	"github.com/informer-anatomy/informer-anatomy/demo/liveview"
	"github.com/informer-anatomy/informer-anatomy/demo/result"
	"github.com/informer-anatomy/informer-anatomy/demo/telemetry"
	"github.com/informer-anatomy/informer-anatomy/demo/terminal"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
)

func main() {
	// Export errors are counted and reported once, at the end (see
	// telemetry.Telemetry.Shutdown); OTel's default handler would also log
	// each retry.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first Ctrl-C stops the run (within a second or two: every
	// control, lesson and wait honours ctx); once it is seen, the signal's
	// default comes back, so that a second Ctrl-C ends the process at once.
	context.AfterFunc(ctx, stop)
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

const (
	// flushTimeout bounds the final export: an OTLP endpoint that is down
	// makes the exporter retry for up to a minute, and the demo must not
	// hang on it.
	flushTimeout = 10 * time.Second
	// interruptedFlushTimeout bounds it after Ctrl-C: the user asked to
	// stop, and a collector that accepts and never answers would otherwise
	// hold the demo for flushTimeout. What is not exported by then is
	// counted and said.
	interruptedFlushTimeout = time.Second
	// liveTraces bounds the traces the live view keeps (see
	// liveview.SpanStore).
	liveTraces = 5000
)

// hooks let a test look inside a run or shorten its waits; the zero value
// is the normal run.
type hooks struct {
	report       func(*options, *terminal.Report) // the run's analysed spans
	synced       func(store.Store)                // the cluster informer's store, once synced
	flushTimeout time.Duration                    // 0: flushTimeout
	liveTraces   int                              // 0: liveTraces
	// backoff replaces the embedded run's reflector pacing (nil:
	// client-go's 800ms doubling, what users see); runs in tests would
	// otherwise mostly wait it out.
	backoff *reflector.Backoff
}

// run is main without os.Exit, for tests: 0 on success, 1 on a failed run,
// 2 on bad flags.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runWith(ctx, args, stdout, stderr, hooks{})
}

func runWith(ctx context.Context, args []string, stdout, stderr io.Writer, h hooks) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "trace-demo: %s\n", terminal.Safe(err.Error()))
		return 2
	}
	// Everything the demo prints on standard output may carry text from
	// the API server (object names, messages): its control characters are
	// shown, not obeyed (terminal.Safe). Standard error's lines are made
	// safe one by one: the progress line's own escapes must work.
	stdout = &terminal.SafeWriter{W: stdout}
	u := terminal.NewPrinter(stdout, stderr, o.quiet)
	tel, err := telemetry.New(ctx, o.exporter, o.out, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "trace-demo: %s\n", terminal.Safe(err.Error()))
		return 2
	}
	interrupted := ctx // done on Ctrl-C only; ctx also ends at --duration
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	var live *liveview.Session
	if o.ui {
		tel.Collector.Limit = telemetry.UICollected // the page keeps its own window
		if live, err = startLive(o, u, tel, stdout, cmp.Or(h.liveTraces, liveTraces)); err != nil {
			fmt.Fprintf(stderr, "trace-demo: %s\n", terminal.Safe(err.Error()))
			return 1
		}
		defer live.Stop()
	}
	stopProgress := u.Progress(tel.Collector)
	res, err := runMode(ctx, o, u, tel, live, h)
	stopProgress()
	return finish(interrupted, o, tel, res, err, stdout, stderr, h)
}

// startLive serves the live view of the run: the page's span store is one
// more processor of the run's tracer provider, so it sees the very spans
// that are exported.
func startLive(o *options, u *terminal.Printer, tel *telemetry.Telemetry, stdout io.Writer, traces int) (*liveview.Session, error) {
	none := ""
	if o.cluster {
		none = "no controls on a real cluster: the demo does not write to your cluster (use --cluster --generate for a workload)"
	}
	return liveview.StartSession(liveview.SessionOptions{Addr: o.uiAddr, TracerProvider: tel.TP, Traces: traces,
		SpansDropped: tel.Dropped, NoControls: none, Warn: u.Warn, Stdout: stdout})
}

// runMode runs what the flags ask for: a cluster, the page's embedded run,
// or the scripted lessons.
func runMode(ctx context.Context, o *options, u *terminal.Printer, tel *telemetry.Telemetry, live *liveview.Session, h hooks) (result.Result, error) {
	env := lessons.Options{Queue: informers.QueueKind(o.queue), Telemetry: tel, TraceFilter: o.traceFilter, Printer: u, Verbose: o.verbose,
		ReflectorBackoff: h.backoff}
	switch {
	case o.cluster:
		return cluster.Run(ctx, cluster.Options{Kubeconfig: o.kubeconfig, Context: o.context, Namespace: o.namespace, Resource: o.resource,
			Generate: o.generate, Duration: o.duration, Queue: o.queue, Objects: o.objects, TraceFilter: o.traceFilter, Live: live,
			SyncTimeout: o.syncTimeout, OnSynced: h.synced}, u, tel)
	case o.ui:
		return livecontrols.Run(ctx, env, live)
	}
	names := lessons.Names()
	if o.scenario != "all" {
		names = []string{o.scenario}
	}
	return lessons.RunScript(ctx, lessons.ScriptOptions{Options: env, Lessons: names,
		Show: func(name string) lessons.Show {
			alone := o.scenario == name
			return lessons.Show{LookFor: o.verbose || alone || (o.scenario == "all" && name == "basic"), Detail: o.verbose || alone}
		}})
}

// finish flushes the spans, draws the waterfalls and the summary, and
// says where the spans went: the run's exit code.
func finish(interrupted context.Context, o *options, tel *telemetry.Telemetry, res result.Result, runErr error, stdout, stderr io.Writer, h hooks) int {
	// Flush before anything else, so that even a failed run leaves its
	// spans in the exporter; an OTLP endpoint that is down costs at most
	// flushTimeout. A file is not bounded: writing it always ends (a full
	// disk fails at once), and a slow machine must not lose its spans.
	fctx := context.Background()
	if o.exporter == "otlp" {
		d := cmp.Or(h.flushTimeout, flushTimeout)
		if interrupted.Err() != nil {
			d = min(d, interruptedFlushTimeout)
		}
		var cancel context.CancelFunc
		fctx, cancel = context.WithTimeout(fctx, d)
		defer cancel()
	}
	// The summary's analysis (about a second for the 100,000 spans a live
	// view keeps) runs while the exporter flushes: after Ctrl-C the two
	// share the user's second instead of adding up.
	type analysed struct {
		spans     []spancheck.Span
		pastLimit int
		rep       *terminal.Report
	}
	analysis := make(chan analysed, 1)
	if runErr == nil {
		go func() {
			spans, pastLimit := tel.Collector.Snapshot()
			analysis <- analysed{spans, pastLimit, terminal.Analyse(spans)}
		}()
	}
	flushErr := tel.Shutdown(fctx)
	if runErr != nil {
		fmt.Fprintf(stderr, "trace-demo: %s\n", terminal.Safe(runErr.Error()))
		// A run that failed before the informer started has no spans: say
		// nothing about them (Shutdown left --out as it was).
		if n := tel.Collector.Count(); n > 0 && flushErr == nil {
			fmt.Fprintf(stderr, "trace-demo: the %d spans of this run were %s\n", n, tel.Where)
		}
		return 1
	}
	a := <-analysis
	if h.report != nil {
		h.report(o, a.rep)
	}
	if !o.quiet {
		draw(stdout, o, tel, a.rep, a.pastLimit, res)
	}
	if flushErr != nil {
		hint := ""
		if o.exporter == "otlp" {
			hint = " (is the OTLP endpoint up? check OTEL_EXPORTER_OTLP_ENDPOINT)"
		}
		fmt.Fprintf(stderr, "trace-demo: exporting spans failed: %s%s\n", terminal.Safe(terminal.FirstLine(flushErr)), hint)
		return 1
	}
	// With the spans themselves on stdout, stdout is theirs alone.
	where := stdout
	if o.out == "-" {
		where = stderr
	}
	total := len(a.spans) + a.pastLimit
	if d := int(tel.Dropped()); d > 0 {
		fmt.Fprintf(where, "%d spans %s; %d more were dropped, not exported: the exporter could not keep up, and tracing drops spans rather than slow the informer\n",
			total-d, tel.Where, d)
	} else {
		fmt.Fprintf(where, "%d spans %s\n", total, tel.Where)
	}
	if !o.quiet && !o.verbose && !o.cluster {
		fmt.Fprintln(stdout, "--verbose draws every lesson's waterfall and the full summary")
	}
	if n := len(a.rep.Broken); n > 0 {
		fmt.Fprintf(stderr, "trace-demo: %d traces break the span contract; first: %s\n", n, terminal.Safe(a.rep.Broken[0].Error()))
		return 1
	}
	return 0
}

// draw is the closing view: the chosen waterfalls, then the summary (the
// full one with --verbose or on a cluster).
func draw(w io.Writer, o *options, tel *telemetry.Telemetry, rep *terminal.Report, pastLimit int, res result.Result) {
	show := res.Show
	if o.traceFilter != nil {
		show = terminal.RecordedOnly(rep, show)
	}
	if !o.verbose && !o.cluster {
		show = lessons.PickShown(show, o.scenario)
	}
	terminal.DrawWaterfalls(w, rep, show)
	if o.verbose || o.cluster {
		terminal.DrawSummary(w, rep, pastLimit)
	} else {
		terminal.DrawShortSummary(w, rep, pastLimit, res.Informer)
	}
	if o.traceFilter != nil {
		fmt.Fprintln(w, terminal.SelectionNote(o.traceWhat, rep, res.HandlerCalls))
	}
	if note := tel.DroppedNote(); note != "" {
		fmt.Fprintln(w, "   "+note)
	}
}
