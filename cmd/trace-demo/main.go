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
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"
)

func main() {
	// Export errors are counted and reported once, at the end (see
	// countingExporter); OTel's default handler would also log each retry.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
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
	objects    int
}

const usageHead = `trace-demo traces every object through the informer stack of this repository:
ListAndWatch → DeltaFIFO → HandleDeltas → indexer + distribute → addCh → pop → nextCh → your handler.

With no flags it starts an embedded API server, runs a scripted workload on pods (creates, updates
coalesced in the queue, deletes, a watch drop that forces a relist with a tombstone, a late handler,
a resync), draws a waterfall per object and stops by itself.

  go run ./cmd/trace-demo                              # the embedded run, all scenarios
  go run ./cmd/trace-demo --scenario relist            # one lesson
  go run ./cmd/trace-demo --cluster --generate         # your cluster (KUBECONFIG or ~/.kube/config)
  go run ./cmd/trace-demo --kubeconfig ~/.kube/config --resource pods --duration 30s

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
	fs.DurationVar(&o.duration, "duration", 0, "stop after this long (cluster default: until Ctrl-C, or when --generate is done)")
	fs.StringVar(&o.scenario, "scenario", "all", "embedded run: all or one of "+strings.Join(scenarioNames, "|"))
	fs.StringVar(&o.exporter, "exporter", "stdout", "where spans go: stdout (stdouttrace JSON to --out), otlp (OTEL_EXPORTER_OTLP_ENDPOINT), none")
	fs.StringVar(&o.out, "out", "trace-demo-spans.json", "file for --exporter stdout; - for standard output")
	fs.BoolVar(&o.quiet, "quiet", false, "print no progress, waterfall or summary: only errors and where the spans went")
	fs.IntVar(&o.objects, "objects", 5, "cluster: how many objects to draw a waterfall for")
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
	if o.cluster {
		if set["scenario"] {
			return nil, errors.New("--scenario runs on the embedded server only; drop --cluster/--kubeconfig/--context, or drop --scenario")
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
		if o.scenario != "all" && !slices.Contains(scenarioNames, o.scenario) {
			return nil, fmt.Errorf("--scenario %q: want all or one of %s", o.scenario, strings.Join(scenarioNames, ", "))
		}
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

// result is what a run hands to the waterfall: which traces to draw.
type result struct {
	show []showcase
}

// run is main without os.Exit, for tests: 0 on success, 1 on a failed run,
// 2 on bad flags.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "trace-demo: %v\n", err)
		return 2
	}
	u := newUI(stdout, stderr, o.quiet)
	tel, err := newTelemetry(ctx, o.exporter, o.out, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "trace-demo: %v\n", err)
		return 2
	}
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	stopProgress := u.progress(tel.collector)
	var res result
	if o.cluster {
		res, err = runCluster(ctx, o, u, tel)
	} else {
		res, err = runEmbedded(ctx, o, u, tel)
	}
	stopProgress()

	// Flush before anything else, so that even a failed run leaves its
	// spans in the exporter; an OTLP endpoint that is down costs at most
	// flushTimeout.
	fctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	flushErr := tel.shutdown(fctx)
	if err != nil {
		fmt.Fprintf(stderr, "trace-demo: %v\n", err)
		// A run that failed before the informer started has no spans: say
		// nothing about them, and leave no empty --out file behind.
		if n := tel.collector.count(); n > 0 && flushErr == nil {
			fmt.Fprintf(stderr, "trace-demo: the %d spans of this run were %s\n", n, tel.where)
		} else if n == 0 {
			tel.removeEmptyOut()
		}
		return 1
	}
	spans, dropped := tel.collector.snapshot()
	rep := analyse(spans)
	if !o.quiet {
		drawWaterfalls(stdout, rep, res.show)
		drawSummary(stdout, rep, dropped)
	}
	if flushErr != nil {
		hint := ""
		if o.exporter == "otlp" {
			hint = " (is the OTLP endpoint up? check OTEL_EXPORTER_OTLP_ENDPOINT)"
		}
		fmt.Fprintf(stderr, "trace-demo: exporting spans failed: %v%s\n", flushErr, hint)
		return 1
	}
	fmt.Fprintf(stdout, "%d spans %s\n", len(spans)+dropped, tel.where)
	if n := len(rep.broken); n > 0 {
		fmt.Fprintf(stderr, "trace-demo: %d handler calls do not have a complete span chain; first: %v\n", n, rep.broken[0])
		return 1
	}
	return 0
}

// ui prints progress and lessons; --quiet silences it. Errors go to stderr
// whatever the mode.
type ui struct {
	out, err io.Writer
	quiet    bool
	mu       sync.Mutex // one line at a time, also against the progress line
	live     bool       // a progress line is on screen, guarded by mu
}

func newUI(out, err io.Writer, quiet bool) *ui { return &ui{out: out, err: err, quiet: quiet} }

func (u *ui) println(s string) {
	if u.quiet {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.clearLine_locked()
	fmt.Fprintln(u.out, s)
}

// clearLine_locked erases the progress line, if one is on screen, so the
// next line does not print over it.
func (u *ui) clearLine_locked() {
	if u.live {
		fmt.Fprint(u.err, "\r\033[K")
		u.live = false
	}
}

func (u *ui) status(format string, args ...any) { u.println("· " + fmt.Sprintf(format, args...)) }

func (u *ui) lesson(name, text string) { u.println(fmt.Sprintf("\n▶ %s: %s", name, text)) }

// warn is for trouble the run survives (a watch error it retries): always shown.
func (u *ui) warn(format string, args ...any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.clearLine_locked()
	fmt.Fprintf(u.err, "trace-demo: "+format+"\n", args...)
}

// progress redraws one line on a terminal with the spans recorded so far;
// not on a pipe or a file, where it would only add noise.
func (u *ui) progress(c *collector) (stop func()) {
	f, ok := u.err.(*os.File)
	if u.quiet || !ok || !isTerminal(f) {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		start := time.Now()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			u.mu.Lock()
			fmt.Fprintf(u.err, "\r\033[K  … %s, %d spans recorded", time.Since(start).Round(100*time.Millisecond), c.count())
			u.live = true
			u.mu.Unlock()
		}
	})
	return func() {
		close(done)
		wg.Wait()
		u.mu.Lock()
		u.clearLine_locked()
		u.mu.Unlock()
	}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
