package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"
	"k8s.io/apimachinery/pkg/labels"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/internal/app/telemetry"
	"github.com/informer-anatomy/informer-anatomy/internal/app/terminal"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
)

func main() {
	// Export errors are counted and reported once, at the end (see
	// countingExporter); OTel's default handler would also log each retry.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first Ctrl-C stops the run (within a second or two: every
	// control, lesson and wait honours ctx); once it is seen, the signal's
	// default comes back, so that a second Ctrl-C ends the process at once.
	context.AfterFunc(ctx, stop)
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command line.
type options struct {
	cluster    bool
	kubeconfig string
	context    string
	namespace  string
	resource   string
	generate   bool
	duration   time.Duration
	scenario   string
	exporter   string
	out        string
	quiet      bool
	verbose    bool
	queue      string
	objects    int
	ui         bool    // --ui: serve the live view (ui.go)
	uiAddr     string  // --ui-addr
	live       *liveUI // the live view of this run, with --ui
	// --trace-keys and --trace-selector, and the filter built from the one
	// given (nil: trace every object); traceWhat names it in messages.
	traceKeys, traceSelector string
	traceFilter              deltafifo.TraceFilter
	traceWhat                string
}

const usageHead = `trace-demo traces every object through the informer stack of this repository:
ListAndWatch → queue (RealFIFO, or DeltaFIFO with --queue deltafifo) → HandleDeltas → indexer +
distribute → addCh → pop → nextCh → your handler.

With no flags it starts an embedded API server, runs a scripted workload on pods (creates, updates,
deletes, changes coalesced in a DeltaFIFO, the same writes on both queues side by side, a watch drop
that forces a relist with a tombstone, a server that cannot stream, a late handler, a resync) on the
RealFIFO, streaming the initial state as client-go v0.37.2 does, draws one waterfall and a short
summary (one screen) and stops by itself. It writes no file unless asked to (--out).

  go run ./cmd/trace-demo                              # the embedded run, all scenarios
  go run ./cmd/trace-demo --verbose                    # every lesson's waterfall and the full summary
  go run ./cmd/trace-demo --scenario relist            # one lesson, with its waterfall
  go run ./cmd/trace-demo --scenario fallback          # a server that cannot stream: LIST, then WATCH
  go run ./cmd/trace-demo --scenario order             # the same writes on both queues, side by side
  go run ./cmd/trace-demo --scenario controller        # a controller on it: handler → workqueue → reconcile
  go run ./cmd/trace-demo --queue deltafifo            # the lessons on the DeltaFIFO (up to 1.32)
  go run ./cmd/trace-demo --out spans.json             # also keep every span (stdouttrace JSON)
  go run ./cmd/trace-demo --cluster --generate         # your cluster (KUBECONFIG or ~/.kube/config)
  go run ./cmd/trace-demo --kubeconfig ~/.kube/config --resource pods --duration 30s
  go run ./cmd/trace-demo --cluster --trace-selector app=web   # trace a few objects, run the rest untraced

Flags:
`

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("trace-demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usageHead)
		fs.PrintDefaults()
	}
	fs.BoolVar(&o.cluster, "cluster", false, "watch a real cluster found by kubeconfig loading rules (KUBECONFIG, ~/.kube/config, in-cluster); implied by --kubeconfig and --context")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "path to a kubeconfig file (implies --cluster)")
	fs.StringVar(&o.context, "context", "", "kubeconfig context to use (implies --cluster)")
	fs.StringVar(&o.namespace, "namespace", "", "cluster: namespace to watch (default: all namespaces)")
	fs.StringVar(&o.resource, "resource", "", "cluster: what to watch: pods, configmaps, ... or group/version/resource, e.g. apps/v1/deployments (default pods; configmaps with --generate)")
	fs.BoolVar(&o.generate, "generate", false, "cluster: create, update and delete ConfigMaps in a namespace of the demo's own, then clean up")
	fs.DurationVar(&o.duration, "duration", 0, "cluster: stop after this long (default: until Ctrl-C, or when --generate is done); the embedded run stops by itself")
	fs.StringVar(&o.scenario, "scenario", "all", "embedded run: all or one of "+strings.Join(scenarioNames, "|")+"; or, not part of all, "+strings.Join(optInScenarios, "|"))
	fs.StringVar(&o.exporter, "exporter", "", "where spans go: stdout (stdouttrace JSON to --out), otlp (OTLP/HTTP, see OTEL_EXPORTER_OTLP_ENDPOINT), none (default: stdout with --out, else none)")
	fs.StringVar(&o.out, "out", "", "write every span as stdouttrace JSON to this file (- for standard output, with --quiet); default: no file")
	fs.BoolVar(&o.quiet, "quiet", false, "print no progress, waterfall or summary: only errors and where the spans went")
	fs.StringVar(&o.queue, "queue", processor.RealFIFOQueue.String(), "the informer's queue: realfifo (client-go v0.37.2's, which hands every event over in the API server's order) or deltafifo (client-go's up to 1.32, which merges a key's queued changes); with --cluster, deltafifo only for "+strings.Join(typedResourceNames(), ", ")+". The coalesce and order lessons run informers of their own on the queue they teach")
	fs.BoolVar(&o.verbose, "verbose", false, "embedded run: every lesson's waterfall and what to look for, and the full summary")
	fs.IntVar(&o.objects, "objects", 5, "cluster: how many objects to draw a waterfall for")
	addUIFlags(fs, o)
	addTraceFlags(fs, o)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (flags only; see --help)", fs.Arg(0))
	}
	if o.kubeconfig != "" || o.context != "" {
		o.cluster = true
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case o.exporter == "" && o.out != "":
		o.exporter = "stdout"
	case o.exporter == "":
		o.exporter = "none"
	case o.exporter == "stdout" && o.out == "":
		return nil, errors.New("--exporter stdout writes to --out: give a file (or - for standard output, with --quiet)")
	case o.exporter != "stdout" && o.out != "":
		return nil, fmt.Errorf("--out is for stdouttrace JSON: drop --exporter %s, or drop --out", o.exporter)
	}
	// The waterfall and the JSON cannot share standard output: a reader
	// would get neither whole. Refusing is clearer than splitting them
	// across stdout and stderr behind the user's back.
	if o.out == "-" && !o.quiet {
		return nil, errors.New("--out - writes the spans as JSON to standard output, where the waterfall goes too: add --quiet, or give a file")
	}
	if o.quiet && o.verbose {
		return nil, errors.New("--quiet and --verbose contradict each other: pick one")
	}
	if o.cluster {
		if set["scenario"] {
			return nil, errors.New("--scenario is for the embedded server only: drop --cluster/--kubeconfig/--context, or drop --scenario")
		}
		if o.generate && o.namespace != "" {
			return nil, errors.New("--generate works in a namespace of its own; drop --namespace")
		}
	} else {
		for _, f := range []string{"namespace", "resource", "generate", "objects"} {
			if set[f] {
				return nil, fmt.Errorf("--%s needs a cluster: add --cluster (or --kubeconfig/--context)", f)
			}
		}
		if set["duration"] && !o.ui {
			return nil, errors.New("--duration is for --cluster runs: the embedded run follows its script and stops by itself when the last lesson is done; drop --duration")
		}
		if o.scenario != "all" && !slices.Contains(scenarioNames, o.scenario) && !slices.Contains(optInScenarios, o.scenario) {
			return nil, fmt.Errorf("--scenario %q: want all or one of %s", o.scenario, strings.Join(append(slices.Clone(scenarioNames), optInScenarios...), ", "))
		}
	}
	if err := checkUIFlags(o, set); err != nil {
		return nil, err
	}
	if err := checkTraceFlags(o); err != nil {
		return nil, err
	}
	if o.queue != processor.RealFIFOQueue.String() && o.queue != processor.DeltaFIFOQueue.String() {
		return nil, fmt.Errorf("--queue %q: want %s or %s", o.queue, processor.RealFIFOQueue, processor.DeltaFIFOQueue)
	}
	if o.objects < 0 || o.duration < 0 {
		return nil, errors.New("--objects and --duration cannot be negative")
	}
	return o, nil
}

// flushTimeout bounds the final export: an OTLP endpoint that is down makes
// the exporter retry for up to a minute, and the demo must not hang on it.
// A variable so that a test can shorten it.
var flushTimeout = 10 * time.Second

// interruptedFlushTimeout bounds it after Ctrl-C: the user asked to stop,
// and a collector that accepts and never answers would otherwise hold the
// demo for flushTimeout. What is not exported by then is counted and said.
const interruptedFlushTimeout = time.Second

// result is what a run hands to the waterfall: which traces to draw, and
// how many calls the main informer's handlers counted themselves (the
// summary's span counts miss the objects a trace filter left out).
type result struct {
	show         []terminal.Showcase
	handlerCalls int64
	informer     string // the main informer's name, for the summary's headline
}

// run is main without os.Exit, for tests: 0 on success, 1 on a failed run,
// 2 on bad flags.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
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
	if o.ui {
		tel.Collector.Limit = telemetry.UICollected // the page keeps its own window
	}
	interrupted := ctx // done on Ctrl-C only; ctx also ends at --duration
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	if o.ui {
		if o.live, err = startLive(o, u, tel, stdout); err != nil {
			fmt.Fprintf(stderr, "trace-demo: %s\n", terminal.Safe(err.Error()))
			return 1
		}
		defer o.live.stop()
	}
	stopProgress := u.Progress(tel.Collector)
	var res result
	if o.cluster {
		res, err = runCluster(ctx, o, u, tel)
	} else if o.ui {
		res, err = runLiveEmbedded(ctx, o, u, tel, o.live)
	} else {
		res, err = runEmbedded(ctx, o, u, tel)
	}
	stopProgress()

	// Flush before anything else, so that even a failed run leaves its
	// spans in the exporter; an OTLP endpoint that is down costs at most
	// flushTimeout. A file is not bounded: writing it always ends (a full
	// disk fails at once), and a slow machine must not lose its spans.
	fctx := context.Background()
	if o.exporter == "otlp" {
		d := flushTimeout
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
	if err == nil {
		go func() {
			spans, pastLimit := tel.Collector.Snapshot()
			analysis <- analysed{spans, pastLimit, terminal.Analyse(spans)}
		}()
	}
	flushErr := tel.Shutdown(fctx)
	if err != nil {
		fmt.Fprintf(stderr, "trace-demo: %s\n", terminal.Safe(err.Error()))
		// A run that failed before the informer started has no spans: say
		// nothing about them, and leave no empty --out file behind.
		if n := tel.Collector.Count(); n > 0 && flushErr == nil {
			fmt.Fprintf(stderr, "trace-demo: the %d spans of this run were %s\n", n, tel.Where)
		} else if n == 0 {
			tel.RemoveEmptyOut()
		}
		return 1
	}
	a := <-analysis
	spans, pastLimit, rep := a.spans, a.pastLimit, a.rep
	if testHookReport != nil {
		testHookReport(o, rep)
	}
	if !o.quiet {
		show := res.show
		if o.traceFilter != nil {
			show = recordedOnly(rep, show)
		}
		if !o.verbose && !o.cluster {
			show = pickShown(show, o.scenario)
		}
		terminal.DrawWaterfalls(stdout, rep, show)
		if o.verbose || o.cluster {
			terminal.DrawSummary(stdout, rep, pastLimit)
		} else {
			terminal.DrawShortSummary(stdout, rep, pastLimit, res.informer)
		}
		if o.traceFilter != nil {
			fmt.Fprintln(stdout, selectionNote(o, rep, res.handlerCalls))
		}
		if note := tel.DroppedNote(); note != "" {
			fmt.Fprintln(stdout, "   "+note)
		}
	}
	if flushErr != nil {
		hint := ""
		if o.exporter == "otlp" {
			hint = " (is the OTLP endpoint up? check OTEL_EXPORTER_OTLP_ENDPOINT)"
		}
		fmt.Fprintf(stderr, "trace-demo: exporting spans failed: %s%s\n", terminal.Safe(firstLine(flushErr)), hint)
		return 1
	}
	// With the spans themselves on stdout, stdout is theirs alone.
	where := stdout
	if o.out == "-" {
		where = stderr
	}
	if d := int(tel.Dropped()); d > 0 {
		fmt.Fprintf(where, "%d spans %s; %d more were dropped, not exported: the exporter could not keep up, and tracing drops spans rather than slow the informer\n",
			len(spans)+pastLimit-d, tel.Where, d)
	} else {
		fmt.Fprintf(where, "%d spans %s\n", len(spans)+pastLimit, tel.Where)
	}
	if !o.quiet && !o.verbose && !o.cluster {
		fmt.Fprintln(stdout, "--verbose draws every lesson's waterfall and the full summary")
	}
	if n := len(rep.Broken); n > 0 {
		fmt.Fprintf(stderr, "trace-demo: %d traces break the span contract; first: %s\n", n, terminal.Safe(rep.Broken[0].Error()))
		return 1
	}
	return 0
}

// testHookReport, when set by a test, is given each run's options and
// analysed spans.
var testHookReport func(*options, *terminal.Report)

// testHookOrder, when set by a test, is given the order lesson's columns.
var testHookOrder func(*orderResult)

// firstLine is err's message up to its first line break: an exporter joins
// one error per span, and a full disk must not print one line per span.
func firstLine(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		n := strings.Count(msg, "\n")
		return fmt.Sprintf("%s (and %d more like it)", msg[:i], n)
	}
	return msg
}

// addTraceFlags defines the selective tracing flags.
func addTraceFlags(fs *flag.FlagSet, o *options) {
	fs.StringVar(&o.traceKeys, "trace-keys", "", "trace only these objects, by store key: namespace/name (or name, cluster-scoped), comma-separated; every other object runs untraced (the informer's TraceFilter option, ours)")
	fs.StringVar(&o.traceSelector, "trace-selector", "", "trace only the objects this label selector matches (e.g. app=web, or 'tier in (web,api),!canary'); a tombstone by its last known labels; every other object runs untraced")
}

// checkTraceFlags builds the trace filter from --trace-keys or
// --trace-selector. A key or selector that cannot match anything is a
// mistake worth stopping for: the run would trace nothing and say so only
// at the end.
func checkTraceFlags(o *options) error {
	switch {
	case o.traceKeys != "" && o.traceSelector != "":
		return errors.New("--trace-keys and --trace-selector: give one of them (to trace by both, put the keys' objects under a label)")
	case o.traceKeys != "":
		var keys []string
		for _, k := range strings.Split(o.traceKeys, ",") {
			k = strings.TrimSpace(k)
			if err := checkTraceKey(k); err != nil {
				return fmt.Errorf("--trace-keys %q: %v", o.traceKeys, err)
			}
			keys = append(keys, k)
		}
		o.traceFilter = deltafifo.TraceKeys(keys...)
		o.traceWhat = "--trace-keys " + strings.Join(keys, ",")
	case o.traceSelector != "":
		sel, err := labels.Parse(o.traceSelector)
		if err != nil {
			return fmt.Errorf("--trace-selector %q is not a label selector: %v (e.g. app=web, app!=db, 'tier in (web,api)')", o.traceSelector, err)
		}
		o.traceFilter = deltafifo.TraceSelector(sel)
		o.traceWhat = "--trace-selector " + sel.String()
	default:
		return nil
	}
	if o.cluster {
		// The factory's own informers (ForResource) take no filter; the
		// demo builds the informer itself (filteredInformerFor) for the
		// typed resources only.
		resource := o.resource
		if resource == "" {
			resource = "pods"
			if o.generate {
				resource = "configmaps"
			}
		}
		if gvr, err := parseResource(resource); err == nil {
			if _, typed := typedExamples[gvr]; !typed {
				return fmt.Errorf("%s with --cluster: chapter 6's factory has no trace filter option, and the demo can pass one only to the informers it builds itself, for %s; %s is not one of them",
					o.traceWhat, strings.Join(typedResourceNames(), ", "), gvr.GroupResource())
			}
		}
	}
	return nil
}

// checkTraceKey accepts a store key: "name" or "namespace/name", neither
// part empty.
func checkTraceKey(k string) error {
	if k == "" {
		return errors.New("an empty key (two commas in a row, or a comma at an end?)")
	}
	parts := strings.Split(k, "/")
	if len(parts) > 2 || slices.Contains(parts, "") {
		return fmt.Errorf("%q is not a store key: want namespace/name, or name for a cluster-scoped object", k)
	}
	return nil
}

// recordedOnly keeps the waterfalls whose trace was recorded: with a trace
// filter, the run's showcases may be about objects it left out.
func recordedOnly(r *terminal.Report, show []terminal.Showcase) []terminal.Showcase {
	var out []terminal.Showcase
	for _, s := range show {
		if r.Find(s) != nil {
			out = append(out, s)
		}
	}
	return out
}

// selectionNote says, under the summary of a filtered run, that its span
// counts cover only the selected objects, and gives the handler calls as
// the handlers counted them.
func selectionNote(o *options, r *terminal.Report, handlerCalls int64) string {
	return fmt.Sprintf("   only the objects selected by %s were traced: the spans and waterfalls above are theirs alone\n"+
		"   (%s, %s); the informer's handlers counted %s in all, traced or not",
		o.traceWhat, terminal.Plural(r.Roots, "delta"), terminal.Plural(len(r.Chains), "traced handler call"), terminal.Plural(int(handlerCalls), "call"))
}

// pickShown is what a run without --verbose draws: with every scenario, the
// one waterfall a newcomer needs first (an update seen by watch, through
// all three listeners); with one scenario, that scenario's.
func pickShown(show []terminal.Showcase, scenario string) []terminal.Showcase {
	var out []terminal.Showcase
	for _, s := range show {
		if (scenario == "all" && s.Step == "basic" && s.Key == demoNamespace+"/web-1") || (scenario != "all" && s.Step == scenario) {
			out = append(out, s)
		}
	}
	if len(out) == 0 && len(show) > 0 {
		out = show[:1]
	}
	return out
}
