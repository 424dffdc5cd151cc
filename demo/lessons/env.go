package lessons

import (
	"context"
	"fmt"
	"sync/atomic"
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
	"github.com/informer-anatomy/informer-anatomy/demo"
	"github.com/informer-anatomy/informer-anatomy/demo/informers"
	"github.com/informer-anatomy/informer-anatomy/demo/telemetry"
	"github.com/informer-anatomy/informer-anatomy/demo/terminal"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/liveprobe"
)

const (
	// Namespace is where the embedded run's main informer watches pods.
	Namespace = "demo"
	// MainInformer is the name of the main informer (the informers the
	// demo builds are named after their resource).
	MainInformer = "pods"
	// resyncPeriod is the factory's default resync and the late handler's
	// period; the other handlers ask for none.
	resyncPeriod = time.Second
)

// Options are what an [Env] is built with.
type Options struct {
	Queue       processor.QueueKind
	Telemetry   *telemetry.Telemetry
	TraceFilter deltafifo.TraceFilter // --trace-keys/--trace-selector; nil: all
	Printer     *terminal.Printer
	// Verbose shows the reflector's expected errors (see watchErrors) as
	// status lines.
	Verbose bool
	// Tunable makes the third handler the live view's tunable one, fast
	// until told otherwise, instead of the scripted run's slow one.
	Tunable bool
	// StepTimeout is how long a lesson waits for anything before it gives
	// up with an error naming what (zero: 20s). A wait for a relist gets
	// the reflector's backoff on top (see untilRelisted).
	StepTimeout time.Duration
	// ReflectorBackoff, if set, replaces the default pacing of every
	// informer's reflector (the main one and the lessons' own). nil, the
	// demo's, is client-go's 800ms doubling to 30s; tests shorten it, so
	// that a run of the script does not mostly wait out backoffs.
	ReflectorBackoff *reflector.Backoff
}

// Env is the embedded run's world: the in-process API server, chapter 6's
// factory, and the pod informer of namespace demo with three handlers (two
// fast, one slow or tunable) on the queue asked for. Lessons run in it,
// one after another (never two at once: an Env is not safe for concurrent
// lessons).
type Env struct {
	// ctx is the run's: every wait of a lesson ends with it.
	ctx      context.Context
	srv      *apiserver.Server
	client   *factory.Client
	factory  factory.SharedInformerFactory
	informer processor.SharedIndexInformer
	// probe wraps the informer's ListerWatcher: the relist and fallback
	// lessons read the reflector's requests from it.
	probe *liveprobe.ReflectorProbe
	// bytes is the estimate of what the informer's cache holds (the live
	// view's).
	bytes liveprobe.CacheBytes
	// stop stops the informer (nil once stopped).
	stop    context.CancelFunc
	printer *terminal.Printer
	tel     *telemetry.Telemetry
	tp      trace.TracerProvider
	filter  deltafifo.TraceFilter
	queue   processor.QueueKind

	handlers []demo.Handler // the three started with the informer
	// third is the third of them, slow (scripted run) or tunable (live
	// view); thirdName its listener's type, as the lessons name it.
	third     demo.Delayed
	thirdName string
	tunable   bool
	// stepTimeout bounds every wait of a lesson (Options.StepTimeout).
	stepTimeout time.Duration
	// backoff is every reflector's pacing (Options.ReflectorBackoff; nil:
	// the default).
	backoff *reflector.Backoff

	// State that outlives one lesson: the late handler (the late-handler
	// and resync lessons'), the controller lesson's controller (nil until
	// it runs), and how many ConfigMaps ForceRelist made.
	late     demo.Handler
	lateReg  processor.ResourceEventHandlerRegistration
	lateName string // its listener's name, *demo.lateHandler#N
	// controller is read by the live view's page while a control may
	// start it.
	controller atomic.Pointer[demoController]
	bumps      int
}

// Start starts the embedded API server with one pod, demo/web-1, which the
// informer's initial state then brings, and the informer with its three
// handlers. It does not wait for the informer to sync. Stop ends it all;
// until then the informer runs even after ctx ends, so that a lesson or a
// control under way never waits on a stopped informer, while every wait
// of a lesson ends with ctx.
func Start(ctx context.Context, o Options) (*Env, error) {
	srv, err := apiserver.Start(apiserver.Options{})
	if err != nil {
		return nil, err
	}
	e := &Env{ctx: ctx, srv: srv, printer: o.Printer, tel: o.Telemetry, tp: o.Telemetry.TP, filter: o.TraceFilter, queue: o.Queue, tunable: o.Tunable, stepTimeout: o.StepTimeout, backoff: o.ReflectorBackoff}
	if e.stepTimeout <= 0 {
		e.stepTimeout = demo.StepTimeout
	}
	if err := e.start(o); err != nil {
		e.Stop()
		return nil, err
	}
	return e, nil
}

func (e *Env) start(o Options) error {
	// Objects that exist before the informer starts arrive in its initial
	// state: streamed, the informer's first request since client-go v0.35.
	if err := e.CreatePod("web-1"); err != nil {
		return err
	}
	client, err := factory.NewForConfig(e.srv.Config())
	if err != nil {
		return err
	}
	e.client = client
	e.factory = factory.NewSharedInformerFactoryWithOptions(client, resyncPeriod,
		factory.WithNamespace(Namespace), factory.WithTracerProvider(e.tp))
	// The factory has no option for the queue: informers.For builds the
	// informer through InformerFor (the first constructor wins), with a
	// probe on its ListerWatcher; the typed accessor then returns this
	// same informer.
	e.informer, e.probe, err = informers.For(e.factory, client, informers.Spec{
		Resource: corev1.SchemeGroupVersion.WithResource("pods"), Namespace: Namespace,
		Queue: e.queue, TracerProvider: e.tp, TraceFilter: e.filter, ReflectorBackoff: e.backoff,
		Bytes: &e.bytes,
	})
	if err != nil {
		return err
	}
	if e.factory.Core().V1().Pods().Informer() != e.informer {
		return fmt.Errorf("the factory made a second pod informer: InformerFor's first-wins rule is broken")
	}
	_ = e.informer.SetWatchErrorHandler(watchErrors(e.printer, o.Verbose))
	if o.Tunable {
		e.third, e.thirdName = demo.NewTunable(), "*demo.tunableHandler"
	} else {
		e.third, e.thirdName = demo.NewSlow(slowDelay), "*demo.slowHandler"
	}
	for _, h := range []demo.Handler{demo.NewAudit(), demo.NewMetrics(), e.third} {
		if _, err := e.informer.AddEventHandlerWithResyncPeriod(h, 0); err != nil {
			return err
		}
		e.handlers = append(e.handlers, h)
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(e.ctx))
	e.stop = stop
	e.factory.Start(runCtx.Done())
	return nil
}

// WaitForSync waits until the informer has synced and every handler has
// seen the initial state, and says how many pods the lister sees.
func (e *Env) WaitForSync() error {
	for typ, ok := range e.factory.WaitForCacheSync(timeoutCh(e.context(), e.stepTimeout)) {
		if !ok {
			return fmt.Errorf("the %v informer did not sync within %v", typ, e.stepTimeout)
		}
	}
	if err := e.handlersCaughtUp("the initial list to reach every handler"); err != nil {
		return err
	}
	pods, err := e.factory.Core().V1().Pods().Lister().Pods(Namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	e.printer.Status("synced: the lister sees %s in %q", terminal.Plural(len(pods), "pod"), Namespace)
	return nil
}

// Stop stops the controller lesson's controller, the informer and the API
// server. A second call does nothing.
func (e *Env) Stop() {
	e.StopInformer()
	if e.srv != nil {
		e.srv.Stop()
		e.srv = nil
	}
}

// StopInformer stops the controller and the informer, and waits until
// they are done, leaving the server up.
func (e *Env) StopInformer() {
	if c := e.controller.Swap(nil); c != nil {
		c.stop()
	}
	if e.stop != nil {
		e.stop()
		e.factory.Shutdown()
		e.stop = nil
	}
}

// URL is the API server's.
func (e *Env) URL() string { return e.srv.URL }

// Server is the embedded API server, for the live view's controls.
func (e *Env) Server() *apiserver.Server { return e.srv }

// Informer is the main informer.
func (e *Env) Informer() processor.SharedIndexInformer { return e.informer }

// Probe is the probe on the main informer's ListerWatcher.
func (e *Env) Probe() *liveprobe.ReflectorProbe { return e.probe }

// CacheBytes is the estimate of the bytes the main informer's cache holds.
func (e *Env) CacheBytes() *liveprobe.CacheBytes { return &e.bytes }

// Queue is the main informer's queue.
func (e *Env) Queue() processor.QueueKind { return e.queue }

// Third is the third handler's delay: the live view's button sets it.
func (e *Env) Third() interface {
	SetDelay(time.Duration) time.Duration
	Delay() time.Duration
} {
	return e.third
}

// HandlerCalls is how many calls the main informer's handlers (the late
// one too) counted themselves, traced or not.
func (e *Env) HandlerCalls() int64 {
	return demo.CountedCalls(e.allHandlers())
}

func (e *Env) allHandlers() []demo.Handler {
	hs := e.handlers
	if e.late != nil {
		hs = append(hs[:len(hs):len(hs)], e.late)
	}
	return hs
}

// AddExtraHandler adds to the main informer a handler of its own
// (*demo.extraHandler), with no resync: the live view's "add a handler".
// It returns the registration and the listener's name.
func (e *Env) AddExtraHandler() (processor.ResourceEventHandlerRegistration, string, error) {
	// No resync, as the page's other listeners: AddEventHandler would take
	// the factory's 1 s default (there for the resync lesson) and put a
	// resync row in the event list every second.
	reg, err := e.informer.AddEventHandlerWithResyncPeriod(demo.NewExtra(), 0)
	if err != nil {
		return nil, "", err
	}
	name := demo.ExtraListener
	if st, err := processor.ReadStats(e.informer); err == nil && len(st.Listeners) > 0 {
		name = st.Listeners[len(st.Listeners)-1].Name // sorted by index: the newest is last
	}
	return reg, name, nil
}

// tombstonesSeen names the handlers whose OnDelete got key as a
// DeletedFinalStateUnknown, as a waterfall's column shows them.
func tombstonesSeen(hs []demo.Handler, key string) []string {
	var out []string
	for _, h := range hs {
		if h.Record().WasTombstoned(key) {
			out = append(out, terminal.ShortListener(fmt.Sprintf("%T", h)))
		}
	}
	return out
}

// CreatePod creates the pod name in namespace demo.
func (e *Env) CreatePod(name string) error {
	_, err := e.srv.Create(e.pod(name, nil))
	return err
}

// UpdatePod sets the label v of the pod name in namespace demo.
func (e *Env) UpdatePod(name, v string) error {
	_, err := e.updateObj(Namespace, name, v)
	return err
}

// DeletePod deletes the pod name in namespace demo.
func (e *Env) DeletePod(name string) error {
	return e.srv.Delete(apiserver.Pods, Namespace, name)
}

// until is the package's until with the run's context and its step
// timeout (Options.StepTimeout).
func (e *Env) until(what string, cond func() bool) error {
	return demo.Poll(e.context(), what, e.stepTimeout, 0, nil, cond)
}

// context is the run's context, or Background when it has none.
func (e *Env) context() context.Context {
	if e.ctx == nil {
		return context.Background()
	}
	return e.ctx
}

// serverState is what every handler must have seen once it has caught up:
// key → resourceVersion of every pod in the demo namespace.
func (e *Env) serverState() (map[string]string, error) {
	return e.serverStateIn(Namespace, "")
}

// watchErrors is the embedded runs' WatchErrorHandler. The relist lesson
// and the page's controls stop the API server and compact its history on
// purpose, so two reports are the lesson at work, not trouble: a refused
// WATCH while the server is down (retried from the same resourceVersion,
// no relist) and a 410 (answered with a new stream). They are status
// lines with --verbose, and otherwise left to the lesson's own text;
// anything else is a warning on the demo's stderr. Without a handler every
// report went to log/slog, and a refused WATCH printed a raw log line in
// the middle of the lessons, telling the reader to check a kubeconfig the
// embedded run does not have.
func watchErrors(u *terminal.Printer, verbose bool) reflector.WatchErrorHandler {
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

func (e *Env) pod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name, Labels: labels}}
}

// updateObj sets the pod's label v and returns the pod as the server
// stored it.
func (e *Env) updateObj(ns, name, v string) (*corev1.Pod, error) {
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

// serverStateIn is serverState for the pods of ns that selector selects.
func (e *Env) serverStateIn(ns, selector string) (map[string]string, error) {
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
func (e *Env) handlersCaughtUp(what string) error {
	return e.caughtUpWith(e.until, what)
}

// handlersRelisted is handlersCaughtUp after something only a relist
// brings (see untilRelisted).
func (e *Env) handlersRelisted(what string) error {
	return e.caughtUpWith(e.untilRelisted, what)
}

func (e *Env) caughtUpWith(wait func(string, func() bool) error, what string) error {
	want, err := e.serverState()
	if err != nil {
		return err
	}
	hs := e.allHandlers()
	return wait(what, func() bool { return demo.CaughtUp(hs, want) })
}

// relistTimeout bounds a wait for something only the reflector's next
// ListAndWatch cycle brings: the step timeout plus twice the longest delay the
// reflector's default backoff can wait (its cap, plus full jitter): once
// for a WATCH refused while the server was down, once before the new
// cycle. The delay grows with every cycle that ends (chapter 3,
// backoff.go) and starts over only every two minutes, so lesson scripts
// run back to back, or restarts pressed on the page, can leave the
// reflector waiting half a minute or more before it relists. That is
// client-go's pacing, and the demo keeps it rather than hide it: with
// the step timeout alone, the second run of the script gave up on a
// relist that was merely late.
func (e *Env) relistTimeout() time.Duration {
	b := e.reflectorBackoff()
	// A custom backoff may have no cap (its delay then never grows past
	// Duration unless Steps lets it: Steps is small in the tests' one).
	top := max(b.Cap, b.Duration)
	longest := top + time.Duration(float64(top)*b.Jitter)
	return e.stepTimeout + 2*longest
}

// untilRelisted is until for a condition that needs the reflector's next
// cycle: it waits up to relistTimeout and, once the wait is longer than
// any other step may take, says on the terminal that the reflector's
// backoff is the reason.
func (e *Env) untilRelisted(what string, cond func() bool) error {
	note := func() {
		b := e.reflectorBackoff()
		e.printer.Status("waiting for %s: the reflector waits longer before each new cycle (%v, doubling to %v, plus up to %.0f%% jitter; back to %v every %v), as client-go's does",
			what, b.Duration, b.Cap, b.Jitter*100, b.Duration, b.ResetAfter)
	}
	return demo.Poll(e.context(), what, e.relistTimeout(), e.stepTimeout, note, cond)
}

// reflectorBackoff is the pacing every informer of the run uses.
func (e *Env) reflectorBackoff() reflector.Backoff {
	if e.backoff != nil {
		return *e.backoff
	}
	return reflector.DefaultBackoff()
}

// timeoutCh closes when ctx ends or after d.
func timeoutCh(ctx context.Context, d time.Duration) <-chan struct{} {
	c, cancel := context.WithTimeout(ctx, d)
	go func() { <-c.Done(); cancel() }()
	return c.Done()
}
