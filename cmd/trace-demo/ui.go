package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	factory "github.com/informer-anatomy/informer-anatomy/chapters/06-factory"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/app/liveview"
	"github.com/informer-anatomy/informer-anatomy/internal/app/telemetry"
	"github.com/informer-anatomy/informer-anatomy/internal/app/terminal"
)

// The live view (--ui): a local page that draws the informer while it
// works, from its own counters (chapter 5's ReadStats and a probe on the
// reflector's requests), lists the recent events from the spans, opens
// each as a waterfall, and on the embedded server drives it with controls.
// See internal/app/liveview for the server and the page.

const (
	defaultUIAddr = "127.0.0.1:7070"
	// liveSlowDelay is the tunable handler's time per call once made slow.
	liveSlowDelay = 10 * time.Millisecond
	// maxBurst is the largest burst the page accepts.
	maxBurst = 100_000
)

// liveTraces bounds the spans the page keeps (see liveview.SpanStore); a
// variable so that a test can make the store evict sooner.
var liveTraces = 5000

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

// liveUI is the --ui part of a run: the page's server, its span store and
// the informer it shows, attached once built.
type liveUI struct {
	spans    *liveview.SpanStore
	url      string
	stopHTTP context.CancelFunc
	done     chan struct{}

	mu sync.Mutex
	// Guarded by mu:
	informer processor.SharedIndexInformer
	probe    *liveview.ReflectorProbe
	source   string
	name     string
	controls []liveview.Control
	none     string
	// sourceNote, if set, adds to source what may change while the page
	// is open (whether the embedded server streams).
	sourceNote func() string
	// workqueue, if set, is the controller's queue row and the listener
	// (by name prefix) whose handler feeds it.
	workqueue func() (listener string, st liveview.WorkqueueState, ok bool)
}

// startLive binds the page's address, prints its URL (and a warning off
// loopback) and serves until stop. The span store is one more processor of
// the run's tracer provider, so it sees the very spans that are exported.
func startLive(o *options, u *terminal.Printer, tel *telemetry.Telemetry, stdout io.Writer) (*liveUI, error) {
	ln, url, warning, err := liveview.Listen(o.uiAddr)
	if err != nil {
		return nil, err
	}
	return serveLive(ln, url, warning, o, u, tel, stdout), nil
}

func serveLive(ln net.Listener, url, warning string, o *options, u *terminal.Printer, tel *telemetry.Telemetry, stdout io.Writer) *liveUI {
	l := &liveUI{spans: liveview.NewSpanStore(liveTraces), url: url, done: make(chan struct{}), source: "starting…"}
	tel.TP.RegisterSpanProcessor(l.spans)
	if warning != "" {
		u.Warn("%s", warning)
	}
	if o.cluster {
		l.none = "no controls on a real cluster: the demo does not write to your cluster (use --cluster --generate for a workload)"
	}
	// The informer and its controls are attached later (attach).
	srv := liveview.NewServer(liveview.Options{Pipeline: l.pipeline, Spans: l.spans, Controls: l.controlList, SpansDropped: tel.Dropped})
	ctx, cancel := context.WithCancel(context.Background())
	l.stopHTTP = cancel
	go func() {
		defer close(l.done)
		if err := liveview.Serve(ctx, ln, srv); err != nil {
			u.Warn("live view: %v", err)
		}
	}()
	// The URL is printed even with --quiet: without it the page is lost.
	fmt.Fprintf(stdout, "live view: %s (Ctrl-C stops)\n", url)
	return l
}

func (l *liveUI) stop() {
	l.stopHTTP()
	<-l.done
}

// attach shows inf on the page; probe wraps its ListerWatcher
// (probedInformerFor).
func (l *liveUI) attach(inf processor.SharedIndexInformer, probe *liveview.ReflectorProbe, name, source string, controls []liveview.Control) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.informer, l.probe, l.name, l.source, l.controls = inf, probe, name, source, controls
}

// setSourceNote sets the informer's sourceNote.
func (l *liveUI) setSourceNote(note func() string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sourceNote = note
}

func (l *liveUI) setWorkqueue(wq func() (string, liveview.WorkqueueState, bool)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.workqueue = wq
}

func (l *liveUI) controlList() ([]liveview.Control, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.controls, l.none
}

// pipeline reads the informer's own counters.
func (l *liveUI) pipeline() liveview.Pipeline {
	l.mu.Lock()
	inf, probe, p, note := l.informer, l.probe, liveview.Pipeline{Informer: l.name, Source: l.source}, l.sourceNote
	l.mu.Unlock()
	if note != nil {
		p.Source += note()
	}
	if inf == nil {
		return p
	}
	st, err := processor.ReadStats(inf)
	if err != nil {
		p.Source += " (" + err.Error() + ")"
		return p
	}
	p.Reflector = probe.State()
	p.Queue = liveview.QueueState{Kind: st.Queue.String(), Depth: st.QueueLen}
	p.HandleDeltas, p.Indexer = st.Distributed, st.Cached
	l.mu.Lock()
	wq := l.workqueue
	l.mu.Unlock()
	var wqListener string
	var wqState liveview.WorkqueueState
	hasWQ := false
	if wq != nil {
		wqListener, wqState, hasWQ = wq()
	}
	for _, ls := range st.Listeners {
		row := liveview.ListenerState{Name: ls.Name, AddCh: ls.AddCh, Pending: ls.Pending, Calls: ls.Calls,
			MeanMicros: float64(ls.MeanHandlerTime().Nanoseconds()) / 1e3, MaxMicros: float64(ls.MaxHandlerTime.Nanoseconds()) / 1e3}
		if hasWQ && strings.HasPrefix(ls.Name, wqListener) {
			row.Workqueue = &wqState
		}
		p.Listeners = append(p.Listeners, row)
	}
	return p
}

// tunableListener is the page's name for the tunable handler's listener:
// its type and its index among the informer's handlers.
const tunableListener = "*main.tunableHandler#2"

// tunableHandler is the live view's third handler: fast or slow at the
// press of a button, to show its ring buffer filling while the others stay
// empty.
type tunableHandler struct {
	*seen
	delay atomic.Int64 // nanoseconds per call
}

func (h *tunableHandler) wait() {
	if d := time.Duration(h.delay.Load()); d > 0 {
		time.Sleep(d)
	}
}
func (h *tunableHandler) OnAdd(obj any, _ bool) { h.wait(); h.add(obj) }
func (h *tunableHandler) OnUpdate(old, obj any) { h.wait(); h.update(old, obj) }
func (h *tunableHandler) OnDelete(obj any)      { h.wait(); h.delete(obj) }
func (h *tunableHandler) handlerState() *seen   { return h.seen }

// extraHandler is a handler added from the page (and removable from it).
type extraHandler struct{ *seen }

func (h extraHandler) OnAdd(obj any, _ bool) { h.add(obj) }
func (h extraHandler) OnUpdate(old, obj any) { h.update(old, obj) }
func (h extraHandler) OnDelete(obj any)      { h.delete(obj) }

// liveEmbedded is the embedded run behind the page.
type liveEmbedded struct {
	*embedded
	live    *liveUI
	u       *terminal.Printer
	tunable *tunableHandler
	probe   *liveview.ReflectorProbe
	// ctx is the run's: when it ends (Ctrl-C, --duration) every control
	// and the lesson script stop.
	ctx context.Context

	busy sync.Mutex // one control at a time; the lesson script holds it throughout
	// Guarded by busy:
	made    int
	created []string // pods the page created, not yet deleted by it
	extras  []processor.ResourceEventHandlerRegistration
}

// probedInformerFor is probedResourceInformerFor for the embedded run's
// pods.
func probedInformerFor(f factory.SharedInformerFactory, namespace string, q processor.QueueKind, tel *telemetry.Telemetry, filter deltafifo.TraceFilter) (processor.SharedIndexInformer, *liveview.ReflectorProbe) {
	return probedResourceInformerFor(f, corev1.SchemeGroupVersion.WithResource("pods"), namespace, q, tel.TP, filter)
}

// probedResourceInformerFor registers with f, for gvr, the informer the page
// shows: built as filteredInformerFor builds it (the factory's namespace,
// index, name and tracer provider; queue q; filter), with its
// ListerWatcher wrapped in a probe so that the page can show the
// reflector's requests (its stream, LIST and WATCH). The factory's own
// informers build their ListerWatcher inside, where nothing can wrap it;
// InformerFor with our constructor is the way in (the first caller's wins,
// as upstream), for a typed resource and, under the unstructured type, for
// any other: the run has this one informer.
func probedResourceInformerFor(f factory.SharedInformerFactory, gvr schema.GroupVersionResource, namespace string, q processor.QueueKind, tp trace.TracerProvider, filter deltafifo.TraceFilter) (processor.SharedIndexInformer, *liveview.ReflectorProbe) {
	var probe *liveview.ReflectorProbe
	example, typed := typedExamples[gvr]
	if !typed {
		example = func() runtime.Object { return &unstructured.Unstructured{} }
	}
	inf := f.InformerFor(example(), func(c *factory.Client, resync time.Duration) processor.SharedIndexInformer {
		client := c.RESTClient
		if !typed {
			client = c.UnstructuredClient
		}
		rc, err := client(gvr.GroupVersion())
		if err != nil {
			panic(err) // cannot happen: NewForConfig makes every typed client, and runCluster made this unstructured one
		}
		probe = liveview.NewReflectorProbe(reflector.NewFilteredListWatchFromClient(rc, gvr.Resource, namespace, func(*metav1.ListOptions) {}))
		return processor.NewSharedIndexInformerWithOptions(probe, example(), processor.SharedIndexInformerOptions{
			ResyncPeriod:   resync,
			Indexers:       store.Indexers{store.NamespaceIndex: store.MetaNamespaceIndexFunc},
			Name:           gvr.Resource,
			TracerProvider: tp,
			Queue:          q,
			TraceFilter:    filter,
		})
	})
	return inf, probe
}

// runLiveEmbedded starts the embedded server and the informer with the
// lessons' handlers, attaches them to the page with its controls, and runs
// until ctx ends (Ctrl-C or --duration).
func runLiveEmbedded(ctx context.Context, o *options, u *terminal.Printer, tel *telemetry.Telemetry, live *liveUI) (result, error) {
	srv, err := apiserver.Start(apiserver.Options{})
	if err != nil {
		return result{}, err
	}
	defer srv.Stop()
	e := &embedded{srv: srv, queue: queueKind(o.queue), tel: tel, tp: tel.TP, filter: o.traceFilter}
	if err := e.create("web-1"); err != nil {
		return result{}, err
	}
	if err := e.newFactory(); err != nil {
		return result{}, err
	}
	inf, probe := probedInformerFor(e.factory, demoNamespace, e.queue, tel, e.filter)
	e.informer, e.probe = inf, probe
	_ = inf.SetWatchErrorHandler(embeddedWatchErrors(u, o.verbose))
	// The tunable handler starts fast: slow only when the page's button
	// (or the lesson script's slow-handler lesson, for its duration) says.
	le := &liveEmbedded{embedded: e, live: live, u: u, tunable: &tunableHandler{seen: newSeen()}, probe: probe}
	for _, h := range []stateful{auditHandler{newSeen()}, metricsHandler{newSeen()}, le.tunable} {
		if _, err := inf.AddEventHandlerWithResyncPeriod(h.(processor.ResourceEventHandler), 0); err != nil {
			return result{}, err
		}
		e.handlers = append(e.handlers, h)
	}
	// The informer outlives ctx until a running control or lesson is done
	// (below), so that a lesson never waits on a stopped informer.
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	e.stop = stop
	le.ctx, e.ctx = ctx, ctx
	defer e.shutdown()
	e.factory.Start(runCtx.Done())
	live.attach(inf, probe, "pods in namespace "+demoNamespace,
		fmt.Sprintf("embedded API server at %s; queue %s", srv.URL, e.queue), le.controls())
	live.setSourceNote(func() string {
		if srv.WatchListEnabled() {
			return "; the server streams"
		}
		return "; the server cannot stream (422 to a stream)"
	})
	u.Status("embedded API server at %s; namespace %q; queue %s; the page drives it", srv.URL, demoNamespace, e.queue)
	<-ctx.Done()
	// A running control or the lesson script sees ctx end too, and stops
	// within moments: wait for it, so that it never writes to a stopped
	// server or waits on a stopped informer.
	le.busy.Lock()
	defer le.busy.Unlock()
	e.shutdown()
	return result{handlerCalls: e.handlerCalls(), informer: mainInformer}, nil
}

// lookForLine is a lesson's "Look for" text as one line.
func lookForLine(scenario string) string {
	return strings.Join(strings.Fields(strings.TrimPrefix(strings.TrimSpace(lookFor[scenario]), "Look for:")), " ")
}

// controls are the page's buttons on the embedded server. Each runs under
// busy, so two presses never interleave their writes.
func (le *liveEmbedded) controls() []liveview.Control {
	e := le.embedded
	return []liveview.Control{
		{Name: "create-pod", Label: "create a pod", LookFor: lookForLine("basic"),
			Do: le.locked(func(context.Context, int) (string, error) {
				le.made++
				name := fmt.Sprintf("live-%d", le.made)
				if err := e.create(name); err != nil {
					return "", err
				}
				le.created = append(le.created, name)
				return "created " + demoNamespace + "/" + name + " (ADDED)", nil
			})},
		{Name: "update-pod", Label: "update a pod", LookFor: "one MODIFIED event: HandleDeltas counts one more change, each handler one more call",
			Do: le.locked(func(context.Context, int) (string, error) {
				le.made++
				return "updated " + demoNamespace + "/web-1 (MODIFIED)", e.update("web-1", fmt.Sprint(le.made))
			})},
		{Name: "delete-pod", Label: "delete a pod", LookFor: "one DELETED event: the indexer shrinks by one, every handler gets OnDelete",
			Do: le.locked(func(context.Context, int) (string, error) {
				if len(le.created) == 0 {
					return "", fmt.Errorf("no pod created from the page is left to delete: create one first")
				}
				name := le.created[len(le.created)-1]
				le.created = le.created[:len(le.created)-1]
				return "deleted " + demoNamespace + "/" + name + " (DELETED)", e.srv.Delete(apiserver.Pods, demoNamespace, name)
			})},
		{Name: "burst", Label: "burst of N updates", Param: "how many updates of demo/web-1", Max: maxBurst,
			LookFor: "for a moment the queue and the listeners fill while the watch delivers; then, while it is slow, only " + tunableListener + "'s pending (its ring buffer) still holds the burst, draining at its handler's pace, while the fast handlers are done. Every listener ends with N more calls: the counters count every update, traced or not. " + burstLimits,
			Do:      le.locked(le.burst)},
		{Name: "slow", Label: "make the handler slow",
			LookFor: "from its next call on, " + tunableListener + " takes " + liveSlowDelay.String() + " (its max time shows it); after a burst its pending grows while the other listeners' stay at 0 and the queue empties: one slow handler never delays the others or the queue. In its events' waterfalls its pop span (informer.listener.pending > 0) is the long one",
			Do: func(context.Context, int) (string, error) {
				le.tunable.delay.Store(int64(liveSlowDelay))
				return fmt.Sprintf("%s now takes %v per call", tunableListener, liveSlowDelay), nil
			}},
		{Name: "fast", Label: "make the handler fast", LookFor: tunableListener + "'s pending drains within moments; its mean time falls as fast calls add up, its max stays",
			Do: func(context.Context, int) (string, error) {
				le.tunable.delay.Store(0)
				return tunableListener + " now returns at once", nil
			}},
		{Name: "add-handler", Label: "add a handler", LookFor: lookForLine("late-handler") + " Its row appears last, with one call per cached object",
			Do: le.locked(func(context.Context, int) (string, error) {
				// No resync, as the page's other listeners: AddEventHandler
				// would take the factory's 1 s default (there for the resync
				// lesson) and put a resync row in the event list every second.
				reg, err := e.informer.AddEventHandlerWithResyncPeriod(&extraHandler{newSeen()}, 0)
				if err != nil {
					return "", err
				}
				le.extras = append(le.extras, reg)
				name := "*main.extraHandler"
				if st, err := processor.ReadStats(e.informer); err == nil && len(st.Listeners) > 0 {
					name = st.Listeners[len(st.Listeners)-1].Name // sorted by index: the newest is last
				}
				return "added " + name + ": it is given every cached object as a synthetic add", nil
			})},
		{Name: "remove-handler", Label: "remove a handler", LookFor: "the last *main.extraHandler row disappears; the others go on",
			Do: le.locked(func(context.Context, int) (string, error) {
				if len(le.extras) == 0 {
					return "", fmt.Errorf("no handler added from the page to remove")
				}
				reg := le.extras[len(le.extras)-1]
				le.extras = le.extras[:len(le.extras)-1]
				return "removed the last *main.extraHandler", e.informer.RemoveEventHandler(reg)
			})},
		{Name: "drop-watch", Label: "drop the watch", LookFor: "the reflector WATCHes again from the last resourceVersion it saw, without a new stream or LIST, losing and repeating nothing; but a watch that ended within a second with no event is a \"very short watch\": then it backs off and fetches the whole state again (a new STREAM)",
			Do: le.locked(func(context.Context, int) (string, error) {
				e.srv.CloseWatches()
				return "every watch of the API server ended", nil
			})},
		{Name: "relist", Label: "compact + force a 410 relist",
			LookFor: "the rewatch from a compacted resourceVersion ends with ERROR Expired (410), so after a backoff the reflector fetches the whole state again: a new STREAM, not a LIST (where the server cannot stream: the refused STREAM, then LIST and WATCH); on the RealFIFO the state is one ReplacedAll entry, and every object still gets its own trace (LISTED) linked to the entry's RealFIFO.ReplacedAll span",
			Do: le.locked(func(context.Context, int) (string, error) {
				if err := e.forceRelist(); err != nil {
					return "", err
				}
				return "history compacted and watches closed: the rewatch gets 410 Expired", nil
			})},
		{Name: "no-stream", Label: "server cannot stream (on/off)",
			LookFor: "switched on, the server refuses every stream with 422 Invalid, as a kube-apiserver whose WatchList feature is off, and the control forces a relist: the rewatch ends with ERROR Expired, the new STREAM is refused (422 Invalid), and the reflector falls back to the classic LIST, then WATCH; its objects come as \"ListAndWatch list\" roots. Switched off, the server streams again: the open watch goes on, and the next relist is a STREAM",
			Do: le.locked(func(context.Context, int) (string, error) {
				if !e.srv.WatchListEnabled() {
					e.srv.SetWatchListEnabled(true)
					return "the server streams again; the reflector keeps its watch, and its next relist streams", nil
				}
				e.srv.SetWatchListEnabled(false)
				if err := e.forceRelist(); err != nil {
					return "", err
				}
				return "the server now refuses streams (422 Invalid); history compacted and watches closed: the reflector's next stream is refused", nil
			})},
		{Name: "restart", Label: "restart the API server", LookFor: "the open WATCH ends with the server; the reflector WATCHes again from its last resourceVersion, without a new stream or LIST (history was kept; a request sent while the server is down fails with connection refused and is retried)",
			Do: le.locked(func(context.Context, int) (string, error) {
				e.srv.Stop()
				return "API server stopped and started again", e.srv.Restart()
			})},
		{Name: "controller", Label: "run a controller",
			LookFor: "a *main.controllerHandler row appears with its workqueue and reconciles: demo/ctl is created, then updated 5 times during its first 200 ms reconcile: 6 adds, 4 merged, 2 reconciles; click demo/ctl's create to see the trace go on to workqueue.process",
			Do: le.locked(func(context.Context, int) (string, error) {
				if err := e.controllerLesson(); err != nil {
					return "", err
				}
				le.live.setWorkqueue(func() (string, liveview.WorkqueueState, bool) {
					c := e.controller
					if c == nil {
						return "", liveview.WorkqueueState{}, false
					}
					st := c.stats()
					return "*main.controllerHandler#", liveview.WorkqueueState{Name: "demo-controller", Depth: st.Depth, Adds: st.Adds,
						Merged: st.Merged, Reconciles: st.Processed, LastMicros: float64(st.ProcessLast.Nanoseconds()) / 1e3}, true
				})
				return e.controllerNote, nil
			})},
		{Name: "lessons", Label: "run the lesson script", LookFor: "each lesson's line is printed in the terminal as it runs, and its result after it; watch the boxes move. The script can run again: each lesson makes its objects anew",
			Do: func(context.Context, int) (string, error) {
				if !le.busy.TryLock() {
					return "", liveview.Busy("busy: another control or the lesson script is running")
				}
				if err := le.ctx.Err(); err != nil {
					le.busy.Unlock()
					return "", fmt.Errorf("the demo is stopping: %w", err)
				}
				go func() {
					defer le.busy.Unlock()
					le.runLessons()
				}()
				return "lesson script started: " + strings.Join(scenarioNames, ", "), nil
			}},
	}
}

// locked runs f under busy, with a context that ends with the request or
// with the run (Ctrl-C), whichever first: http.Server's Shutdown does not
// cancel a request under way, and a burst must not hold the demo open.
func (le *liveEmbedded) locked(f func(context.Context, int) (string, error)) func(context.Context, int) (string, error) {
	return func(ctx context.Context, n int) (string, error) {
		if !le.busy.TryLock() {
			return "", liveview.Busy("busy: another control or the lesson script is running")
		}
		defer le.busy.Unlock()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(le.ctx, cancel)()
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("the demo is stopping: %w", err)
		}
		return f(ctx, n)
	}
}

// The burst's limits. A backlog is what the informer holds in memory (its
// queue, and every listener's addCh and pending, which grow without bound,
// as client-go's do): the page refuses a burst that would leave more than
// maxBacklog waiting, or, with the tunable handler slow, more than it
// drains in maxDrain. Before, a slow handler and repeated bursts of 100,000
// grew the demo past 600 MB, and the page showed the backlog for a quarter
// of an hour.
const (
	maxBacklog = maxBurst
	maxDrain   = time.Minute
)

// burstLimits is the part of the burst's "look for" that says what the
// page refuses, and what happens past the embedded server's watch buffer.
var burstLimits = fmt.Sprintf("The page refuses a burst that would leave more than %d changes waiting for the informer's slowest listener, or, with the handler slow, more than it handles in %v (%d at %v per call). "+
	"If the informer falls %d events behind the API server, the embedded server ends its watch, as a real one ends a watch that cannot keep up: the reflector watches again from its last resourceVersion, or, when the server's history (its last %d events) no longer reaches back that far, gets 410 Expired and streams the whole state again; the updates it missed then come as one relisted state, and the listeners get fewer than N calls. The burst's answer says when that happened",
	maxBacklog, maxDrain, int(maxDrain/liveSlowDelay), liveSlowDelay, apiserver.WatchBuffer, apiserver.DefaultHistoryLimit)

// backlog is how many changes wait for the slowest listener now: those
// the API server has made and the watch has not yet delivered (the
// server's resourceVersion ahead of the reflector's: a burst's answer
// comes once its updates are written, before the informer has them all),
// the queue, and the fullest listener's addCh and pending.
func (le *liveEmbedded) backlog() (int, error) {
	st, err := processor.ReadStats(le.informer)
	if err != nil {
		return 0, err
	}
	most := 0
	for _, l := range st.Listeners {
		most = max(most, l.AddCh+l.Pending)
	}
	n := st.QueueLen + most
	server, err1 := strconv.Atoi(le.srv.ResourceVersion())
	seen, err2 := strconv.Atoi(le.probe.State().ResourceVersion)
	if err1 == nil && err2 == nil && server > seen {
		n += server - seen
	}
	return n, nil
}

// burst writes n updates of demo/web-1, if the page can show them
// honestly (burstLimits), and stops when ctx ends.
func (le *liveEmbedded) burst(ctx context.Context, n int) (string, error) {
	limit, why := maxBacklog, "the page's bound on what the informer holds in memory"
	if d := time.Duration(le.tunable.delay.Load()); d > 0 && int(maxDrain/d) < limit {
		limit = int(maxDrain / d)
		why = fmt.Sprintf("what %s, at %v per call, handles in %v", tunableListener, d, maxDrain)
	}
	if n > limit {
		return "", liveview.Invalid("refused: a burst of %d is more than %d, %s: make the handler fast for a larger burst", n, limit, why)
	}
	waiting, err := le.backlog()
	if err != nil {
		return "", err
	}
	if waiting+n > limit {
		return "", liveview.Busy("refused for now: %d changes still wait for the informer's slowest listener, and %d more would be past %d, %s: wait for them to drain, or make the handler fast", waiting, n, limit, why)
	}
	before := le.probe.State()
	for i := range n {
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("stopped after %d of %d updates: %w", i, n, err)
		}
		le.made++
		if err := le.embedded.update("web-1", fmt.Sprint(le.made)); err != nil {
			return "", fmt.Errorf("update %d of %d: %w", i+1, n, err)
		}
	}
	msg := fmt.Sprintf("%d updates of %s/web-1 written", n, demoNamespace)
	if after := le.probe.State(); after.Watches > before.Watches || after.Lists > before.Lists || after.Phase != "WATCH" {
		msg += fmt.Sprintf("; meanwhile the informer's watch ended (the embedded server ends a watch that falls %d events behind) and the reflector is at %s now: the listeners may get fewer than %d calls", apiserver.WatchBuffer, after.Phase, n)
	}
	return msg, nil
}

// runLessons runs every scenario of the embedded script, printing each
// lesson's line, as the scripted run does.
func (le *liveEmbedded) runLessons() {
	for _, s := range scenarioNames {
		if le.ctx.Err() != nil {
			le.u.Status("lesson script stopped before %s", s)
			return
		}
		text := lessons[s]
		restore := func() {}
		if s == "slow-handler" {
			// The lesson is about a slow handler: the tunable one is made
			// as slow as the scripted run's for the lesson, then put back
			// (unless a button changed it meanwhile).
			prev := le.tunable.delay.Swap(int64(embeddedSlowDelay))
			restore = func() { le.tunable.delay.CompareAndSwap(int64(embeddedSlowDelay), prev) }
			text = slowLesson("*main.tunableHandler", embeddedSlowDelay) + " (the lesson script makes it so for this lesson)"
		}
		le.u.Lesson(s, text)
		le.u.Println(lookFor[s])
		started := time.Now()
		err := le.step(s)
		restore()
		if err != nil {
			if le.ctx.Err() != nil {
				le.u.Status("lesson script stopped during %s", s)
				return
			}
			le.u.Warn("lesson %s: %v", s, err)
			return
		}
		if line := le.lessonResult(s, started, "tunableHandler"); line != "" {
			le.u.Status("%s", line)
		}
	}
	le.u.Status("lesson script done")
}
