package lessons

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/demo/result"
	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// The handoff lesson (opt-in: --scenario handoff): from one controller to
// the next (docs/span-contract.md). Two controllers, each an informer of its
// own (ConfigMaps in namespace lessons, one label value each), a handler
// that feeds a traced workqueue and one worker whose reconcile runs on
// dropin.ReconcileContext. Controller A reconciles lessons/handoff by
// writing lessons/handoff-out, stamped with its reconcile's span
// (dropin.StampTraceparent, tracing.k8s.io/traceparent); controller B
// reconciles lessons/handoff-out. B's informer links the root of that
// ADDED event to A's span, and B's reconcile is in that root's trace.
// Opt-in, like the controller lesson: it is about controllers, not the
// informer's script.

const (
	handoffLabel  = "demo.informer-anatomy.io/handoff"
	handoffSource = "handoff"
	handoffOut    = "handoff-out"
	// The spans the two reconciles start under their workqueue.process.
	handoffSpanA = "controller A: reconcile"
	handoffSpanB = "controller B: reconcile"
)

func init() {
	register(Lesson{
		Name:  "handoff",
		Order: 95,
		OptIn: true,
		Text: func(*Env) string {
			return "controller A reconciles lessons/" + handoffSource + " by writing lessons/" + handoffOut +
				", stamped with its reconcile's span (tracing.k8s.io/traceparent); controller B, on an informer of its own, reconciles that."
		},
		LookFor: "  Look for: two traces. A's goes from its ADDED to workqueue.process and \"" + handoffSpanA + "\" (the span\n" +
			"  that stamped the write). B's root, the ADDED of lessons/" + handoffOut + ", links to that span: a link, not a\n" +
			"  parent (A's trace was over); B's trace goes on down to its own workqueue.process and \"" + handoffSpanB + "\".",
		Run: handoff,
	})
}

// handoffHandler puts the keys of its informer's ConfigMaps on its queue.
// A pointer, so its listener is "*lessons.handoffHandler#N".
type handoffHandler struct {
	// HandlerCallLink: the informer tells each call its span, so that
	// the queue's add is its child (the span contract's "After the
	// handler"); a handler given to dropin's informer is linked by its
	// adapter, this one is given to chapter 5's directly.
	dropin.HandlerCallLink
	q workqueue.TypedRateLimitingInterface[string]
}

func (h *handoffHandler) enqueue(obj any) {
	if key, err := deltafifo.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		h.q.Add(key)
	}
}

func (h *handoffHandler) OnAdd(obj any, _ bool)  { h.enqueue(obj) }
func (h *handoffHandler) OnUpdate(_, newObj any) { h.enqueue(newObj) }
func (h *handoffHandler) OnDelete(obj any)       { h.enqueue(obj) }

// handoffController is one of the lesson's two controllers.
type handoffController struct {
	queue  *dropin.TracedQueue[string]
	synced func() bool
	stop   func()

	mu   sync.Mutex
	done map[string]int // reconciles by key, guarded by mu
}

func (c *handoffController) reconciled(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done[key]
}

// startHandoffController starts an informer on the lesson's ConfigMaps
// labelled role, a traced queue named name, and one worker calling
// reconcile with the ctx dropin.ReconcileContext gives.
func (e *Env) startHandoffController(name, role string, reconcile func(ctx context.Context, key string) error) (*handoffController, error) {
	rc, err := e.client.RESTClient(corev1.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	lw := reflector.NewFilteredListWatchFromClient(rc, "configmaps", lessonNamespace, func(o *metav1.ListOptions) {
		o.LabelSelector = handoffLabel + "=" + role
	})
	inf := processor.NewSharedIndexInformerWithOptions(lw, &corev1.ConfigMap{}, processor.SharedIndexInformerOptions{
		Name: "configmaps-" + name, TracerProvider: e.tp, TraceFilter: e.filter, Queue: e.queue,
		ReflectorBackoff: e.backoff,
	})
	q := dropin.NewTracedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](), workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
	tq := q.(*dropin.TracedQueue[string])
	tq.SetTracerProvider(e.tp)
	if _, err := inf.AddEventHandler(&handoffHandler{q: q}); err != nil {
		return nil, err
	}
	c := &handoffController{queue: tq, synced: inf.HasSynced, done: map[string]int{}}
	ctx, cancel := context.WithCancel(e.context())
	var wg sync.WaitGroup
	wg.Go(func() { inf.RunWithContext(ctx) })
	wg.Go(func() {
		for {
			key, shutdown := q.Get()
			if shutdown {
				return
			}
			err := reconcile(dropin.ReconcileContext(ctx), key)
			if err == nil {
				c.mu.Lock()
				c.done[key]++
				c.mu.Unlock()
				q.Forget(key)
			} else if ctx.Err() == nil {
				e.printer.Warn("handoff: %s: reconcile %s: %v (retried)", name, key, err)
				q.AddRateLimited(key)
			}
			q.Done(key)
		}
	})
	c.stop = sync.OnceFunc(func() { cancel(); q.ShutDown(); wg.Wait() })
	return c, nil
}

func handoff(e *Env) (Outcome, error) {
	started := time.Now()
	// The lesson's informers are its own and list afresh; objects an
	// earlier run left are made anew, so their changes are watch events.
	for _, n := range []string{handoffSource, handoffOut} {
		if err := e.deleteIfThere(apiserver.ConfigMaps, lessonNamespace, n); err != nil {
			return Outcome{}, err
		}
	}
	tracer := e.tp.Tracer("github.com/informer-anatomy/informer-anatomy/demo/lessons")
	srcKey, outKey := lessonNamespace+"/"+handoffSource, lessonNamespace+"/"+handoffOut
	witness := &handoffWitness{keys: map[string]bool{srcKey: true, outKey: true}}
	e.tel.TP.RegisterSpanProcessor(witness)
	defer e.tel.TP.UnregisterSpanProcessor(witness)

	a, err := e.startHandoffController("controller-a", "source", func(ctx context.Context, key string) error {
		ctx, span := tracer.Start(ctx, handoffSpanA)
		defer span.End()
		obj, err := e.srv.Get(apiserver.ConfigMaps, lessonNamespace, handoffSource)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		out := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: lessonNamespace, Name: handoffOut,
			Labels: map[string]string{handoffLabel: "output"}}, Data: obj.(*corev1.ConfigMap).Data}
		dropin.StampTraceparent(ctx, out)
		_, err = e.srv.Create(out)
		if apierrors.IsAlreadyExists(err) {
			return nil // the first reconcile wrote it; the lesson writes once
		}
		return err
	})
	if err != nil {
		return Outcome{}, err
	}
	defer a.stop()
	b, err := e.startHandoffController("controller-b", "output", func(ctx context.Context, _ string) error {
		_, span := tracer.Start(ctx, handoffSpanB)
		span.End()
		return nil
	})
	if err != nil {
		return Outcome{}, err
	}
	defer b.stop()
	// Both informers have their (empty) initial state before the write:
	// otherwise B's could list lessons/handoff-out in its initial state,
	// and a listed object gets no writer's link (state, not a write).
	if err := e.until("both controllers' informers to sync", func() bool { return a.synced() && b.synced() }); err != nil {
		return Outcome{}, err
	}

	if _, err := e.srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: lessonNamespace, Name: handoffSource,
		Labels: map[string]string{handoffLabel: "source"}}, Data: map[string]string{"from": "the user"}}); err != nil {
		return Outcome{}, err
	}
	if err := e.until("controller B to reconcile "+outKey, func() bool { return b.reconciled(outKey) > 0 }); err != nil {
		return Outcome{}, err
	}
	// Stopping waits for both workers: every reconcile's spans have ended.
	a.stop()
	b.stop()

	watchAdded := result.RootIs(tracing.SpanRootPrefix+"watch", "ADDED")
	out := Outcome{Show: []result.Showcase{
		{Title: "controller A reconciles, and its reconcile's span stamps the object it writes", Key: srcKey, Match: watchAdded, Last: true},
		{Title: "controller B's informer receives the write: its root links to A's span", Key: outKey, Match: watchAdded, Last: true},
	}}
	out.Line = handoffLine(witness.snapshot(), srcKey, outKey, started)
	return out, nil
}

// maxWitnessed bounds what a handoffWitness keeps: a run of the lesson
// ends a handful of the spans it keeps.
const maxWitnessed = 256

// handoffWitness is a span processor of the lesson's own, on the tracer
// provider for the lesson's run, that keeps the few spans handoffLine
// reads: the two reconciles' spans and the roots of the lesson's two
// objects. The run's Collector is not enough: with --ui it keeps the run's
// first telemetry.UICollected spans only, for the closing summary, and
// after a burst of 100,000 updates on the page it is full, so the line
// said that no root of lessons/handoff-out had been recorded.
type handoffWitness struct {
	keys map[string]bool // the object keys whose roots it keeps

	mu    sync.Mutex
	spans []spancheck.Span // guarded by mu
}

func (w *handoffWitness) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (w *handoffWitness) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.Name() != handoffSpanA && s.Name() != handoffSpanB && (s.Parent().IsValid() || !w.keys[objectKey(s)]) {
		return
	}
	sp := spancheck.FromReadOnly(s)
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.spans) < maxWitnessed {
		w.spans = append(w.spans, sp)
	}
}

func (w *handoffWitness) Shutdown(context.Context) error   { return nil }
func (w *handoffWitness) ForceFlush(context.Context) error { return nil }

func (w *handoffWitness) snapshot() []spancheck.Span {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.spans)
}

// objectKey is a span's informer.object.key attribute, "" if none.
func objectKey(s sdktrace.ReadOnlySpan) string {
	for _, a := range s.Attributes() {
		if a.Key == tracing.KeyObjectKey {
			return a.Value.AsString()
		}
	}
	return ""
}

// handoffLine reads this run's spans: A's stamping span, B's root that
// links to it, and B's reconcile under that root.
func handoffLine(spans []spancheck.Span, srcKey, outKey string, since time.Time) string {
	ix := spancheck.NewIndex(spans)
	var bRoot *spancheck.Span
	for _, r := range ix.Roots {
		if r.Attr(tracing.KeyObjectKey) == outKey && len(r.WriterLinks) > 0 && !r.Start.Before(since) {
			bRoot = r // the last of this run
		}
	}
	if bRoot == nil {
		return "handoff: no root of " + outKey + " linking to a writer was recorded (is it among the traced objects?)"
	}
	writer, found := ix.ByID[bRoot.WriterLinks[0].SpanID()]
	writerSays := "a span not among the recorded ones"
	if found {
		writerSays = fmt.Sprintf("%q (trace %s)", writer.Name, shortTrace(writer.TraceID))
	}
	bReconciled := "no reconcile of B in that trace"
	for _, s := range ix.ByID {
		if s.Name == handoffSpanB && s.TraceID == bRoot.TraceID {
			bReconciled = "B's reconcile is in that trace"
		}
	}
	return fmt.Sprintf("handoff: controller A's reconcile of %s wrote %s; B's informer rooted its ADDED in trace %s, linked to A's %s; %s",
		srcKey, outKey, shortTrace(bRoot.TraceID), writerSays, bReconciled)
}

func shortTrace(id trace.TraceID) string { return id.String()[:8] + "…" }
