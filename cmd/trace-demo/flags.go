package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/labels"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/demo/lessons"
)

// defaultUIAddr is where --ui serves the page unless --ui-addr says
// otherwise: loopback, so that only this machine can open it.
const defaultUIAddr = "127.0.0.1:7070"

// options are the command line, checked, and what follows from it alone
// (the trace filter).
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
	// --sync-timeout: how long the cluster run waits for the informer's
	// first sync (0: demo/cluster's default, a minute).
	syncTimeout time.Duration
	ui          bool   // --ui: serve the live view (demo/liveview)
	uiAddr      string // --ui-addr
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
  go run ./cmd/trace-demo --scenario scale             # what an informer holds per pod, and a relist's heap: client-go's and ours
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
	fs.StringVar(&o.scenario, "scenario", "all", "embedded run: all or one of "+strings.Join(lessons.Names(), "|")+"; or, not part of all, "+strings.Join(lessons.OptInNames(), "|"))
	fs.StringVar(&o.exporter, "exporter", "", "where spans go: stdout (stdouttrace JSON to --out), otlp (OTLP/HTTP, see OTEL_EXPORTER_OTLP_ENDPOINT), none (default: stdout with --out, else none)")
	fs.StringVar(&o.out, "out", "", "write every span as stdouttrace JSON to this file (- for standard output, with --quiet); default: no file")
	fs.BoolVar(&o.quiet, "quiet", false, "print no progress, waterfall or summary: only errors and where the spans went")
	fs.StringVar(&o.queue, "queue", processor.RealFIFOQueue.String(), "the informer's queue: realfifo (client-go v0.37.2's, which hands every event over in the API server's order) or deltafifo (client-go's up to 1.32, which merges a key's queued changes). The coalesce and order lessons run informers of their own on the queue they teach")
	fs.BoolVar(&o.verbose, "verbose", false, "embedded run: every lesson's waterfall and what to look for, and the full summary")
	fs.IntVar(&o.objects, "objects", 5, "cluster: how many objects to draw a waterfall for")
	fs.DurationVar(&o.syncTimeout, "sync-timeout", 0, "cluster: how long to wait for the informer's first sync before giving up (default 1m; a resource with 100,000 objects or more may need several)")
	addUIFlags(fs, o)
	addTraceFlags(fs, o)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (flags only; see --help)", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := o.check(set); err != nil {
		return nil, err
	}
	return o, nil
}

// check refuses flags that contradict each other or the mode, saying
// what to do instead, and fills in what follows from them (the exporter,
// --cluster, the trace filter); set holds the flags given.
func (o *options) check(set map[string]bool) error {
	if o.kubeconfig != "" || o.context != "" {
		o.cluster = true
	}
	switch {
	case o.exporter == "" && o.out != "":
		o.exporter = "stdout"
	case o.exporter == "":
		o.exporter = "none"
	case o.exporter == "stdout" && o.out == "":
		return errors.New("--exporter stdout writes to --out: give a file (or - for standard output, with --quiet)")
	case o.exporter != "stdout" && o.out != "":
		return fmt.Errorf("--out is for stdouttrace JSON: drop --exporter %s, or drop --out", o.exporter)
	}
	// The waterfall and the JSON cannot share standard output: a reader
	// would get neither whole. Refusing is clearer than splitting them
	// across stdout and stderr behind the user's back.
	if o.out == "-" && !o.quiet {
		return errors.New("--out - writes the spans as JSON to standard output, where the waterfall goes too: add --quiet, or give a file")
	}
	if o.quiet && o.verbose {
		return errors.New("--quiet and --verbose contradict each other: pick one")
	}
	if o.cluster {
		if set["scenario"] {
			return errors.New("--scenario is for the embedded server only: drop --cluster/--kubeconfig/--context, or drop --scenario")
		}
		if o.generate && o.namespace != "" {
			return errors.New("--generate works in a namespace of its own; drop --namespace")
		}
	} else {
		for _, f := range []string{"namespace", "resource", "generate", "objects", "sync-timeout"} {
			if set[f] {
				return fmt.Errorf("--%s needs a cluster: add --cluster (or --kubeconfig/--context)", f)
			}
		}
		if set["duration"] && !o.ui {
			return errors.New("--duration is for --cluster runs: the embedded run follows its script and stops by itself when the last lesson is done; drop --duration")
		}
		if o.scenario != "all" && !slices.Contains(lessons.Names(), o.scenario) && !slices.Contains(lessons.OptInNames(), o.scenario) {
			return fmt.Errorf("--scenario %q: want all or one of %s", o.scenario, strings.Join(append(lessons.Names(), lessons.OptInNames()...), ", "))
		}
	}
	if err := checkUIFlags(o, set); err != nil {
		return err
	}
	if err := checkTraceFlags(o, set); err != nil {
		return err
	}
	if o.queue != processor.RealFIFOQueue.String() && o.queue != processor.DeltaFIFOQueue.String() {
		return fmt.Errorf("--queue %q: want %s or %s", o.queue, processor.RealFIFOQueue, processor.DeltaFIFOQueue)
	}
	for _, f := range []struct {
		name     string
		negative bool
	}{{"objects", o.objects < 0}, {"duration", o.duration < 0}, {"sync-timeout", o.syncTimeout < 0}} {
		if f.negative {
			return fmt.Errorf("--%s cannot be negative", f.name)
		}
	}
	return nil
}

// addTraceFlags defines the selective tracing flags.
func addTraceFlags(fs *flag.FlagSet, o *options) {
	fs.StringVar(&o.traceKeys, "trace-keys", "", "trace only these objects, by store key: namespace/name (or name, cluster-scoped), comma-separated; every other object runs untraced (the informer's TraceFilter option, ours)")
	fs.StringVar(&o.traceSelector, "trace-selector", "", "trace only the objects this label selector matches (e.g. app=web, or 'tier in (web,api),!canary'); a tombstone by its last known labels; every other object runs untraced")
}

// checkTraceFlags builds the trace filter from --trace-keys or
// --trace-selector (set holds the flags given). A key or selector that
// cannot match anything is a mistake worth stopping for: the run would
// trace nothing and say so only at the end. So is a blank one, given but
// empty or spaces only: a blank selector parses as "everything", and the
// run would trace every object when a few were asked for.
func checkTraceFlags(o *options, set map[string]bool) error {
	if set["trace-keys"] && strings.TrimSpace(o.traceKeys) == "" {
		return fmt.Errorf("--trace-keys %s is blank: give the objects' keys (namespace/name, comma-separated), or drop the flag to trace every object", echo(o.traceKeys))
	}
	if set["trace-selector"] && strings.TrimSpace(o.traceSelector) == "" {
		return fmt.Errorf("--trace-selector %s is blank, which would select every object: give a label selector (e.g. app=web), or drop the flag to trace every object", echo(o.traceSelector))
	}
	switch {
	case o.traceKeys != "" && o.traceSelector != "":
		return errors.New("--trace-keys and --trace-selector: give one of them (to trace by both, put the keys' objects under a label)")
	case o.traceKeys != "":
		var keys []string
		for _, k := range strings.Split(o.traceKeys, ",") {
			k = strings.TrimSpace(k)
			if err := checkTraceKey(k); err != nil {
				return fmt.Errorf("--trace-keys %s: %s", echo(o.traceKeys), echoError(err))
			}
			keys = append(keys, k)
		}
		o.traceFilter = deltafifo.TraceKeys(keys...)
		o.traceWhat = "--trace-keys " + cutEcho(strings.Join(keys, ","), maxEcho)
	case o.traceSelector != "":
		sel, err := labels.Parse(o.traceSelector)
		if err != nil {
			return fmt.Errorf("--trace-selector %s is not a label selector: %s (e.g. app=web, app!=db, 'tier in (web,api)')", echo(o.traceSelector), echoError(err))
		}
		if sel.Empty() {
			return fmt.Errorf("--trace-selector %s selects every object: give a label selector that picks some (e.g. app=web), or drop the flag to trace every object", echo(o.traceSelector))
		}
		o.traceFilter = deltafifo.TraceSelector(sel)
		o.traceWhat = "--trace-selector " + cutEcho(sel.String(), maxEcho)
	default:
		return nil
	}
	return nil
}

// maxEcho is the most of a flag's value a message repeats, in bytes, and
// maxEchoedError the most of a parser's error about it (which may quote
// the value again): a selector of 120 KB, made by a script, is echoed
// once, cut, with its length, not twice whole.
const (
	maxEcho        = 100
	maxEchoedError = 200
)

// echo is v quoted for a message, cut to maxEcho bytes (on a character
// boundary) and saying how long it was.
func echo(v string) string {
	if len(v) <= maxEcho {
		return strconv.Quote(v)
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(v[:runeCut(v, maxEcho)]), len(v))
}

// cutEcho is s cut to most bytes (on a character boundary), saying how
// much was left out.
func cutEcho(s string, most int) string {
	if len(s) <= most {
		return s
	}
	n := runeCut(s, most)
	return fmt.Sprintf("%s… (%d more bytes)", s[:n], len(s)-n)
}

// quoted is a Go-quoted string in an error's text, as apimachinery's
// validation quotes the value it refuses.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// echoError is a parser's error about a flag's value for a message: a
// quoted string in it longer than maxEcho/2 (the value again, or a part
// of it) is cut, so that the reason after it is kept, and the whole is
// cut to maxEchoedError bytes.
func echoError(err error) string {
	s := quoted.ReplaceAllStringFunc(err.Error(), func(q string) string {
		if len(q) <= maxEcho/2 {
			return q
		}
		return q[:runeCut(q, maxEcho/2)] + `…" (` + strconv.Itoa(len(q)-2) + " bytes)"
	})
	return cutEcho(s, maxEchoedError)
}

// runeCut is the largest cut of s at most n bytes long that does not
// split a character.
func runeCut(s string, n int) int {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// checkTraceKey accepts a store key: "name" or "namespace/name", neither
// part empty.
func checkTraceKey(k string) error {
	if k == "" {
		return errors.New("an empty key (two commas in a row, or a comma at an end?)")
	}
	parts := strings.Split(k, "/")
	if len(parts) > 2 || slices.Contains(parts, "") {
		return fmt.Errorf("%s is not a store key: want namespace/name, or name for a cluster-scoped object", echo(k))
	}
	return nil
}

func addUIFlags(fs *flag.FlagSet, o *options) {
	fs.BoolVar(&o.ui, "ui", false, "serve the live view, a local page that draws the informer at work (with controls on the embedded server); runs until Ctrl-C or --duration")
	fs.StringVar(&o.uiAddr, "ui-addr", defaultUIAddr, "with --ui: the address the page is served on (loopback unless you say otherwise)")
}

func checkUIFlags(o *options, set map[string]bool) error {
	if !o.ui {
		if set["ui-addr"] {
			return fmt.Errorf("--ui-addr needs --ui")
		}
		return nil
	}
	if set["scenario"] {
		return fmt.Errorf("--scenario is for the scripted run; with --ui the page's \"run the lesson script\" button runs every lesson: drop --scenario")
	}
	return nil
}
