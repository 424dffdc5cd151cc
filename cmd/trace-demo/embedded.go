package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	factory "github.com/informer-anatomy/informer-anatomy/chapters/06-factory"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/app/liveview"
	"github.com/informer-anatomy/informer-anatomy/internal/app/telemetry"
	"github.com/informer-anatomy/informer-anatomy/internal/app/terminal"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// The embedded run: a scripted workload on the in-process API server, one
// lesson per scenario. Every step waits for what it caused to reach the
// handlers (never a fixed sleep), and gives up with an error after
// stepTimeout, or at once when the run's context ends (Ctrl-C), so the
// demo cannot hang.

const (
	demoNamespace = "demo"
	stepTimeout   = 20 * time.Second
	// fillerPods is how many pods the coalesce and order lessons' DeltaFIFO
	// informers list ahead of the lesson's own pods; see ensureFillers.
	fillerPods = 600
	// fillerLabel marks the filler pods.
	fillerLabel = "demo.informer-anatomy.io/filler"
	// embeddedSlowDelay is the slow handler's time per call on the embedded
	// server: long enough that five quick updates queue up in its ring
	// buffer, short enough that a run stays within a few seconds.
	embeddedSlowDelay = 3 * time.Millisecond
	// resyncPeriod is the factory's default resync and the late handler's
	// period; the other handlers ask for none.
	resyncPeriod = time.Second
	// mainInformer is the name of the embedded runs' pod informer (the
	// informers the demo builds are named after their resource).
	mainInformer = "pods"
)

var scenarioNames = []string{"basic", "coalesce", "order", "slow-handler", "relist", "fallback", "late-handler", "resync"}

// lessons: what each scenario does (always shown) and what to look for in
// its waterfall (shown with the waterfall).
var lessons = map[string]string{
	"basic":        "create demo/web-2, update demo/web-1, delete demo/web-2.",
	"coalesce":     "lessons/web-coalesced changes twice as its initial state arrives, behind " + fmt.Sprint(fillerPods) + " queued pods, on a DeltaFIFO.",
	"order":        "the same six writes (update a, b, a, delete b, update c, a) watched by two informers, one on each queue.",
	"slow-handler": slowLesson("*main.slowHandler", embeddedSlowDelay),
	"relist":       "stop the API server, delete demo/doomed, compact history, restart: the informer must fetch the whole state again.",
	"fallback":     "the API server stops streaming (as one whose WatchList feature is off), then a forced relist.",
	"late-handler": "add *main.lateHandler after the informer has synced.",
	"resync":       "the late handler asked for a " + resyncPeriod.String() + " resync; the others asked for none.",
}

var lookFor = map[string]string{
	"basic": "  Look for: one trace per change, from \"ListAndWatch watch\" to each handler's On* span;\n" +
		"  RealFIFO.queued (DeltaFIFO.queued with --queue deltafifo) is the time in the queue,\n" +
		"  addCh/pop/nextCh the time inside each listener.",
	"coalesce": "  Look for: HandleDeltas with informer.deltas.count 3 (Replaced, Updated, Updated popped together; 2 if\n" +
		"  the queue reached it between the two watch events); each delta keeps its own trace, and\n" +
		"  HandleDeltas links to the others' roots. The RealFIFO (client-go's queue since 1.33) never does this.",
	"order": "  Look for: the RealFIFO column is the API server's column, call for call: every event in order.\n" +
		"  The DeltaFIFO keeps one entry per key, in the order keys first arrived (the initial state: a, b, c);\n" +
		"  a change to a key still queued joins its entry, so a key's calls come in a row. Each key's own\n" +
		"  calls are in order on both queues; only the order across keys differs.",
	"slow-handler": "  Look for: the slow listener's pop span (informer.listener.pending > 0) grows while the\n" +
		"  other listeners finished long ago: one slow handler never delays the others or the queue.\n" +
		"  The line below gives its time per call on demo/busy.",
	"relist": "  Look for: after the restart the watch cannot resume from a compacted resourceVersion, so the\n" +
		"  reflector fetches the whole state again in a new Reflector.ListAndWatch cycle: as a stream again\n" +
		"  (WATCH sendInitialEvents=true), not a LIST; the line below lists its requests. The pod missing from\n" +
		"  the streamed state reaches OnDelete as a DeletedFinalStateUnknown: root \"ListAndWatch watchlist\",\n" +
		"  TOMBSTONE. On the RealFIFO the whole state is one queue entry (HandleDeltas ReplacedAll): every\n" +
		"  object and every tombstone still gets its own trace, whose root links to the entry's RealFIFO.ReplacedAll span.",
	"fallback": "  Look for: the relist's stream is refused with 422 Invalid, and the reflector falls back to the\n" +
		"  classic LIST, then WATCH (the line below lists its requests); the objects arrive as \"ListAndWatch list\"\n" +
		"  roots. In a trace viewer the cycle span Reflector.ListAndWatch holds a failed Reflector.watchlist,\n" +
		"  a watchlist.fallback event with the reason, then Reflector.list. The server streams again afterwards.",
	"late-handler": "  Look for: root AddEventHandler, straight into addCh: the new handler is given every cached\n" +
		"  object as a synthetic add; the queue and HandleDeltas are not involved.",
	"resync": "  Look for: root \"ListAndWatch resync\" (Sync delta) reaching OnUpdate of the late handler only.",
}

// slowLesson is the slow-handler lesson's line, naming the run's slow
// handler (the live view's is the tunable one) and its time per call now.
func slowLesson(handler string, d time.Duration) string {
	return "update demo/busy five times in a row; " + handler + " takes " + d.String() + " per call."
}

// lessonResult is the line printed after lesson s has run: what it did,
// read from this run of it (the spans that started since, the handlers'
// own records), so that a lesson run again in the same process (the live
// view's lesson script) reports its own run. slowHandler is the type name
// of the slow handler (slowHandler, or the live view's tunableHandler).
func (e *embedded) lessonResult(s string, since time.Time, slowHandler string) string {
	switch s {
	case "coalesce":
		return e.coalesceNote
	case "order":
		return e.order.summary()
	case "slow-handler":
		return slowLine(e.tel.Collector, slowHandler, since)
	case "relist":
		hs := tombstonesSeen(e.handlers, demoNamespace+"/doomed")
		if len(hs) == 0 {
			return "relist: demo/doomed reached no handler as a DeletedFinalStateUnknown (its delete arrived as a watch event?)"
		}
		line := fmt.Sprintf("relist: demo/doomed reached OnDelete as a DeletedFinalStateUnknown (%s)", strings.Join(hs, ", "))
		if e.requestsLine != "" {
			line += "\n· " + e.requestsLine
		}
		return line
	case "fallback":
		return e.requestsLine
	case "controller":
		return e.controllerNote
	case "late-handler":
		if e.late == nil {
			return ""
		}
		return fmt.Sprintf("late-handler: %s was given %s, one per cached pod, each a trace of its own with root %s; the queue and HandleDeltas were not involved",
			e.lateName, terminal.Plural(int(e.late.adds.Load()), "synthetic add"), tracing.SpanAddEventHandle)
	case "resync":
		if e.late == nil {
			return ""
		}
		line := fmt.Sprintf("resync: %s got %s so far (OnUpdate with the cached object, resourceVersion unchanged: root \"ListAndWatch resync\"), about one per cached pod every %v",
			e.lateName, terminal.Plural(int(e.late.resyncs.Load()), "resync call"), resyncPeriod)
		if others := e.othersResynced() - e.resyncsBefore; others > 0 {
			return line + fmt.Sprintf("; the handlers that asked for none got %d during the lesson", others)
		}
		return line + "; the handlers that asked for none got none"
	}
	return ""
}

// othersResynced sums the resync calls (an update with an unchanged
// resourceVersion) of the handlers that asked for no resync.
func (e *embedded) othersResynced() int64 {
	var n int64
	for _, h := range e.handlers {
		n += h.handlerState().resyncs.Load()
	}
	return n
}

// slowLine is the line after the slow-handler lesson: the slow handler's
// time per call on demo/busy, from the spans of its calls since the lesson
// began, and which calls they were.
func slowLine(c *telemetry.Collector, handler string, since time.Time) string {
	adds, updates, mean := slowCalls(c, demoNamespace+"/busy", handler, since)
	n := adds + updates
	if n == 0 {
		why := "not among the traced objects?"
		if c.Full() {
			why = "the summary's span memory is full: the page's waterfalls still have them"
		}
		return "slow-handler: no traced call of *main." + handler + " on demo/busy (" + why + ")"
	}
	return fmt.Sprintf("slow-handler: *main.%s took %s per call on demo/busy (%s: %d OnAdd for its create, %d OnUpdate for the five updates)",
		handler, terminal.Ms(mean), terminal.Plural(n, "call"), adds, updates)
}

type embedded struct {
	// ctx is the run's: every wait of a lesson ends with it (nil: none).
	ctx      context.Context
	srv      *apiserver.Server
	informer processor.SharedIndexInformer
	// probe wraps the informer's ListerWatcher: the relist and fallback
	// lessons read the reflector's requests from it.
	probe   *liveview.ReflectorProbe
	stop    context.CancelFunc
	factory factory.SharedInformerFactory

	handlers []stateful // the three started with the informer
	// controller is the controller lesson's (nil until it runs), and
	// controllerNote its result line.
	controller     *demoController
	controllerNote string
	late           *lateHandler
	lateReg        processor.ResourceEventHandlerRegistration
	lateName       string // its listener's name, *main.lateHandler#N
	// resyncsBefore is othersResynced when the resync lesson began.
	resyncsBefore int64
	show          []terminal.Showcase

	queue        processor.QueueKind
	client       *factory.Client
	tel          *telemetry.Telemetry
	tp           trace.TracerProvider
	filter       deltafifo.TraceFilter // --trace-keys/--trace-selector; nil: all
	fillersMade  bool
	coalesceNote string
	order        *orderResult
	// requestsLine is the relist or fallback lesson's result: the
	// reflector's requests during the lesson, read from the probe.
	requestsLine string
	bumps        int // ConfigMaps forceRelist made
}

func (e *embedded) pod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: demoNamespace, Name: name, Labels: labels}}
}

func (e *embedded) create(name string) error {
	_, err := e.srv.Create(e.pod(name, nil))
	return err
}

func (e *embedded) update(name, v string) error { return e.updateIn(demoNamespace, name, v) }

func (e *embedded) updateIn(ns, name, v string) error {
	_, err := e.updateObj(ns, name, v)
	return err
}

// updateObj sets the pod's label v and returns the pod as the server
// stored it.
func (e *embedded) updateObj(ns, name, v string) (*corev1.Pod, error) {
	obj, err := e.srv.Get(apiserver.Pods, ns, name)
	if err != nil {
		return nil, err
	}
	p := obj.(*corev1.Pod).DeepCopy()
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels["v"] = v
	out, err := e.srv.Update(p)
	if err != nil {
		return nil, err
	}
	return out.(*corev1.Pod), nil
}

// serverState is what every handler must have seen once it has caught up:
// key → resourceVersion of every pod in the demo namespace.
func (e *embedded) serverState() (map[string]string, error) {
	return e.serverStateIn(demoNamespace, "")
}

// serverStateIn is serverState for the pods of ns that selector selects.
func (e *embedded) serverStateIn(ns, selector string) (map[string]string, error) {
	obj, err := e.srv.List(context.Background(), apiserver.Pods, ns, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range obj.(*corev1.PodList).Items {
		out[p.Namespace+"/"+p.Name] = p.ResourceVersion
	}
	return out, nil
}

// handlersCaughtUp waits until every handler (the late one too, once added) has
// seen exactly the server's pods at their current versions.
func (e *embedded) handlersCaughtUp(what string) error {
	want, err := e.serverState()
	if err != nil {
		return err
	}
	hs := e.handlers
	if e.late != nil {
		hs = append(hs[:len(hs):len(hs)], e.late)
	}
	return e.until(what, func() bool { return caughtUp(hs, want) })
}

// until is until with the run's context.
func (e *embedded) until(what string, cond func() bool) error {
	return until(e.context(), what, cond)
}

// context is the run's context, or Background when it has none.
func (e *embedded) context() context.Context {
	if e.ctx == nil {
		return context.Background()
	}
	return e.ctx
}

// until polls cond; after stepTimeout it gives up with an error naming what
// was awaited, so a broken step ends the demo instead of hanging it; when
// ctx ends (Ctrl-C) it stops at once, with an error that wraps ctx's.
func until(ctx context.Context, what string, cond func() bool) error {
	deadline := time.Now().Add(stepTimeout)
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up after %v waiting for %s", stepTimeout, what)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stopped while waiting for %s: %w", what, ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// newFactory makes the client and the factory every embedded run builds
// its informer from: the demo namespace, the run's TracerProvider.
func (e *embedded) newFactory() error {
	client, err := factory.NewForConfig(e.srv.Config())
	if err != nil {
		return err
	}
	e.client = client
	e.factory = factory.NewSharedInformerFactoryWithOptions(client, resyncPeriod,
		factory.WithNamespace(demoNamespace), factory.WithTracerProvider(e.tp))
	return nil
}

func runEmbedded(ctx context.Context, o *options, u *terminal.Printer, tel *telemetry.Telemetry) (result, error) {
	srv, err := apiserver.Start(apiserver.Options{})
	if err != nil {
		return result{}, err
	}
	defer srv.Stop()
	e := &embedded{ctx: ctx, srv: srv, queue: queueKind(o.queue), tel: tel, tp: tel.TP, filter: o.traceFilter}
	steps := scenarioNames
	if o.scenario != "all" {
		steps = []string{o.scenario}
	}
	u.Status("embedded API server at %s; namespace %q; queue %s; scenarios: %s", srv.URL, demoNamespace, e.queue, strings.Join(steps, ", "))

	// Objects that exist before the informer starts arrive in its initial
	// state: streamed, the informer's first request since client-go v0.35.
	if err := e.create("web-1"); err != nil {
		return result{}, err
	}
	e.show = append(e.show, terminal.Show("streamed before the informer started (STREAM → Replaced)", demoNamespace+"/web-1", terminal.RootIs("ListAndWatch watchlist", "LISTED")))
	e.show[0].Step = "start"
	if err := e.newFactory(); err != nil {
		return result{}, err
	}
	// The factory has no option for the queue: InformerFor with our own
	// constructor picks it (filteredInformerFor); the typed accessor then
	// returns this same informer, because the first wins.
	// probedInformerFor builds it as filteredInformerFor does, with a
	// probe on its ListerWatcher for the lessons about its requests.
	e.informer, e.probe = probedInformerFor(e.factory, demoNamespace, e.queue, tel, e.filter)
	_ = e.informer.SetWatchErrorHandler(embeddedWatchErrors(u, o.verbose))
	podLister := e.factory.Core().V1().Pods().Lister()
	if e.factory.Core().V1().Pods().Informer() != e.informer {
		return result{}, fmt.Errorf("the factory made a second pod informer: InformerFor's first-wins rule is broken")
	}
	for _, h := range []stateful{auditHandler{newSeen()}, metricsHandler{newSeen()}, newSlowHandler(embeddedSlowDelay)} {
		if _, err := e.informer.AddEventHandlerWithResyncPeriod(h.(processor.ResourceEventHandler), 0); err != nil {
			return result{}, err
		}
		e.handlers = append(e.handlers, h)
	}

	runCtx, stop := context.WithCancel(ctx)
	e.stop = stop
	defer e.shutdown()
	e.factory.Start(runCtx.Done())
	for typ, ok := range e.factory.WaitForCacheSync(timeoutCh(runCtx, stepTimeout)) {
		if !ok {
			return result{}, fmt.Errorf("the %v informer did not sync within %v", typ, stepTimeout)
		}
	}
	if err := e.handlersCaughtUp("the initial list to reach every handler"); err != nil {
		return result{}, err
	}
	pods, err := podLister.Pods(demoNamespace).List(labels.Everything())
	if err != nil {
		return result{}, err
	}
	u.Status("synced: the lister sees %s in %q", terminal.Plural(len(pods), "pod"), demoNamespace)

	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return result{}, fmt.Errorf("interrupted before %s", s)
		}
		u.Lesson(s, lessons[s])
		if o.verbose || o.scenario == s || (o.scenario == "all" && s == "basic") {
			u.Println(lookFor[s])
		}
		before := len(e.show)
		started := time.Now()
		if err := e.step(s); err != nil {
			if ctx.Err() != nil {
				return result{}, fmt.Errorf("interrupted during %s", s)
			}
			return result{}, fmt.Errorf("scenario %s: %w", s, err)
		}
		if s == "order" && (o.verbose || o.scenario == s) {
			u.Status("%s", e.order.summary())
			u.Println(e.order.table())
		} else if line := e.lessonResult(s, started, "slowHandler"); line != "" {
			u.Status("%s", line)
		}
		for i := before; i < len(e.show); i++ {
			e.show[i].Step = s
		}
	}
	if err := e.handlersCaughtUp("every handler to see the final state"); err != nil {
		return result{}, err
	}
	e.shutdown()
	if testHookOrder != nil && e.order != nil {
		testHookOrder(e.order)
	}
	return result{show: e.show, handlerCalls: e.handlerCalls(), informer: mainInformer}, nil
}

// handlerCalls is how many calls the main informer's handlers (the late
// one too) counted themselves.
func (e *embedded) handlerCalls() int64 {
	hs := e.handlers
	if e.late != nil {
		hs = append(hs[:len(hs):len(hs)], e.late)
	}
	return countedCalls(hs)
}

func (e *embedded) shutdown() {
	if e.controller != nil {
		e.controller.stop()
		e.controller = nil
	}
	if e.stop != nil {
		e.stop()
		e.factory.Shutdown()
		e.stop = nil
	}
}

func (e *embedded) step(name string) error {
	ns := demoNamespace + "/"
	switch name {
	case "basic":
		// An earlier run of the script stopped mid-lesson may have left it.
		if err := e.deleteIfThere(apiserver.Pods, demoNamespace, "web-2"); err != nil {
			return err
		}
		if err := e.create("web-2"); err != nil {
			return err
		}
		if err := e.handlersCaughtUp("demo/web-2's ADDED"); err != nil {
			return err
		}
		if err := e.update("web-1", "1"); err != nil {
			return err
		}
		if err := e.handlersCaughtUp("demo/web-1's MODIFIED"); err != nil {
			return err
		}
		if err := e.srv.Delete(apiserver.Pods, demoNamespace, "web-2"); err != nil {
			return err
		}
		e.show = append(e.show,
			terminal.Show("created while watching (ADDED)", ns+"web-2", terminal.RootIs("ListAndWatch watch", "ADDED")),
			terminal.Show("updated (MODIFIED)", ns+"web-1", terminal.RootIs("ListAndWatch watch", "MODIFIED")),
			terminal.Show("deleted (DELETED)", ns+"web-2", terminal.RootIs("ListAndWatch watch", "DELETED")))
		return e.handlersCaughtUp("demo/web-2's DELETED")
	case "coalesce":
		note, err := e.coalesceLesson()
		e.coalesceNote = note
		return err
	case "order":
		res, err := e.orderLesson()
		e.order = res
		return err
	case "slow-handler":
		// Left by an earlier run of the lesson (the live view's script
		// runs it again): gone, and seen gone, before it is made anew.
		if err := e.deleteIfThere(apiserver.Pods, demoNamespace, "busy"); err != nil {
			return err
		}
		if err := e.handlersCaughtUp("demo/busy of an earlier run deleted"); err != nil {
			return err
		}
		if err := e.create("busy"); err != nil {
			return err
		}
		if err := e.handlersCaughtUp("demo/busy's ADDED"); err != nil {
			return err
		}
		for v := range 5 {
			if err := e.update("busy", fmt.Sprint(v+1)); err != nil {
				return err
			}
		}
		e.show = append(e.show, terminal.Show("the last of five quick updates, behind a slow handler", ns+"busy", func(r *spancheck.Span) bool {
			return r.Name == "ListAndWatch watch" && r.Attr(tracing.KeyEventType) == "MODIFIED"
		}))
		e.show[len(e.show)-1].Last = true
		return e.handlersCaughtUp("the five updates of demo/busy")
	case "relist":
		for _, h := range e.handlers {
			h.handlerState().forgetTombstone(demoNamespace + "/doomed")
		}
		if err := e.deleteIfThere(apiserver.Pods, demoNamespace, "doomed"); err != nil {
			return err
		}
		if err := e.create("doomed"); err != nil {
			return err
		}
		if err := e.handlersCaughtUp("demo/doomed's ADDED"); err != nil {
			return err
		}
		since := e.requestsSent()
		e.srv.Stop()
		if err := e.srv.Delete(apiserver.Pods, demoNamespace, "doomed"); err != nil {
			return err
		}
		// Another write after the delete, then compaction: the watch's
		// resourceVersion is now too old to resume, so the reflector must
		// fetch the whole state again (a stream), which no longer has
		// demo/doomed.
		if err := e.deleteIfThere(apiserver.ConfigMaps, demoNamespace, "bump"); err != nil {
			return err
		}
		if _, err := e.srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: demoNamespace, Name: "bump"}}); err != nil {
			return err
		}
		e.srv.Compact()
		if err := e.srv.Restart(); err != nil {
			return err
		}
		e.show = append(e.show, terminal.Show("deleted while the watch was down: a tombstone from the relist's stream", ns+"doomed", terminal.RootIs("ListAndWatch watchlist", "TOMBSTONE")))
		if err := e.handlersCaughtUp("the relist's tombstone for demo/doomed"); err != nil {
			return err
		}
		e.requestsLine = "relist: " + e.requestsSince(since)
		return nil
	case "fallback":
		return e.fallbackLesson()
	case "late-handler":
		return e.addLate()
	case "controller":
		return e.controllerLesson()
	case "resync":
		e.resyncsBefore = e.othersResynced()
		if e.late == nil {
			if err := e.addLate(); err != nil {
				return err
			}
		}
		e.show = append(e.show, terminal.Show("resync: the cache's copy handed again to the handler that asked", ns+"web-1", terminal.RootIs("ListAndWatch resync", "RESYNC")))
		return e.until("demo/web-1's resync to reach the late handler", func() bool {
			return e.late.wasResynced(demoNamespace + "/web-1")
		})
	}
	return fmt.Errorf("unknown scenario %q", name)
}

func (e *embedded) addLate() error {
	// The lesson run again (the live view's script) replaces its late
	// handler rather than pile them up.
	if e.lateReg != nil {
		if err := e.informer.RemoveEventHandler(e.lateReg); err != nil {
			return err
		}
		e.late, e.lateReg = nil, nil
	}
	// A pointer, so that its listener is "*main.lateHandler#N", as the
	// lesson's line says.
	h := &lateHandler{newSeen()}
	reg, err := e.informer.AddEventHandlerWithResyncPeriod(h, resyncPeriod)
	if err != nil {
		return err
	}
	e.late, e.lateReg, e.lateName = h, reg, "*main.lateHandler"
	if st, err := processor.ReadStats(e.informer); err == nil && len(st.Listeners) > 0 {
		e.lateName = st.Listeners[len(st.Listeners)-1].Name // sorted by index: the newest is last
	}
	e.show = append(e.show, terminal.Show("a handler added after sync gets synthetic adds", demoNamespace+"/web-1", terminal.RootIs(tracing.SpanAddEventHandle, "")))
	return e.handlersCaughtUp("the late handler's synthetic adds")
}

// timeoutCh closes when ctx ends or after d.
func timeoutCh(ctx context.Context, d time.Duration) <-chan struct{} {
	c, cancel := context.WithTimeout(ctx, d)
	go func() { <-c.Done(); cancel() }()
	return c.Done()
}

// maxPoppedTogether is the largest informer.deltas.count among key's
// HandleDeltas spans that started at since or later.
func maxPoppedTogether(c *telemetry.Collector, key string, since time.Time) int {
	spans, _ := c.Snapshot()
	n := 0
	for _, s := range spans {
		if s.Name == tracing.SpanHandleDeltas && s.Attr(tracing.KeyObjectKey) == key && !s.Start.Before(since) {
			var k int
			if _, err := fmt.Sscan(s.Attr(tracing.KeyDeltasCount), &k); err == nil {
				n = max(n, k)
			}
		}
	}
	return n
}

// slowCalls counts handler's traced OnAdd and OnUpdate calls for key that
// started at since or later (handler: the type's name, e.g. slowHandler:
// the calls it does sleep on, unlike the filler pods'), and their mean
// duration.
func slowCalls(c *telemetry.Collector, key, handler string, since time.Time) (adds, updates int, mean time.Duration) {
	spans, _ := c.Snapshot()
	sum := time.Duration(0)
	for i := range spans {
		s := &spans[i]
		if !spancheck.IsHandlerCall(s) || s.Start.Before(since) || s.Attr(tracing.KeyObjectKey) != key || !strings.HasPrefix(terminal.ShortListener(s.Attr(tracing.KeyListener)), handler+"#") {
			continue
		}
		switch s.Name {
		case tracing.SpanOnAdd:
			adds++
		case tracing.SpanOnUpdate:
			updates++
		default:
			continue
		}
		sum += s.Duration()
	}
	if n := adds + updates; n > 0 {
		mean = sum / time.Duration(n)
	}
	return adds, updates, mean
}

// embeddedWatchErrors is the embedded runs' WatchErrorHandler. The relist
// lesson and the page's controls stop the API server and compact its
// history on purpose, so two reports are the lesson at work, not trouble:
// a refused WATCH while the server is down (retried from the same
// resourceVersion, no relist) and a 410 (answered with a new stream). They are
// status lines with --verbose, and otherwise left to the lesson's own
// text; anything else is a warning on the demo's stderr. Without a handler
// every report went to log/slog, and a refused WATCH printed a raw log
// line in the middle of the lessons, telling the reader to check a
// kubeconfig the embedded run does not have.
func embeddedWatchErrors(u *terminal.Printer, verbose bool) reflector.WatchErrorHandler {
	return func(_ *reflector.Reflector, err error) {
		switch {
		case utilnet.IsConnectionRefused(err), apierrors.IsResourceExpired(err), apierrors.IsGone(err):
			if verbose {
				u.Status("reflector: %v", err)
			}
		default:
			u.Warn("reflector: %v (the informer retries)", err)
		}
	}
}
