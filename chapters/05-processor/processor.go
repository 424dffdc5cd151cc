package processor

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	"github.com/informer-anatomy/informer-anatomy/internal/chunkq"
	"github.com/informer-anatomy/informer-anatomy/internal/monoclock"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// addChBuffer is the capacity of a listener's addCh. Upstream's addCh is
// unbuffered, so distribute hands every notification to every listener's
// pop goroutine in person: a goroutine switch per listener per event,
// which was most of the fan-out's cost in BenchmarkSharedInformer. With a
// buffer, distribute runs on while pop takes notifications in runs. Nothing
// a handler can see changes: per-listener order is the channel's, distribute
// still never waits for a handler (pop empties addCh as fast as it fills),
// and the addCh span still ends when pop takes the notification.
const addChBuffer = 1024

type notificationKind int

const (
	addKind notificationKind = iota
	updateKind
	deleteKind
)

// notification is one event for one listener. It is copied into each
// listener's addCh, so per-listener trace state lives behind tr, which add
// copies for its listener.
//
// Mirrors upstream's addNotification, updateNotification and
// deleteNotification (shared_informer.go), folded into one struct so the ring
// buffer holds values, not interfaces.
type notification struct {
	kind            notificationKind
	oldObj, newObj  any
	isInInitialList bool
	tr              *notificationTrace // nil when untraced
	// untraced marks a notification made while tracing was on whose change
	// is not traced: the informer's TraceFilter left its object out, or
	// the sampler dropped its root (see notify). A [CallSpanHandler] is
	// told the call is untraced, so that what it starts (a traced
	// workqueue's Add) stays out of the traces as well, rather than start
	// a trace the sampler decides on again. Ours.
	untraced bool
}

// notificationTrace is where one notification's trace stands for one
// listener: the span context the next span hangs under, and when the current
// wait began.
type notificationTrace struct {
	parent    trace.SpanContext
	key       string
	waitStart time.Time
	pending   int
}

// processorListener relays notifications to one handler:
//
//	add ──addCh──▶ pop (ring buffer) ──nextCh──▶ run ──▶ handler
//
// add never waits for the handler: pop takes everything from addCh at once
// and buffers it, so a slow handler delays only itself. The buffer grows
// without bound, the price of never blocking distribute (and with it the
// informer and every other handler).
//
// Mirrors the unexported processorListener of upstream shared_informer.go.
type processorListener struct {
	nextCh chan notification
	addCh  chan notification
	// runFinished is closed when run returns (after RemoveEventHandler or
	// stop): upstream's ShutdownChan.
	runFinished chan struct{}

	handler ResourceEventHandler
	// calls is handler, if it is a CallSpanHandler (ours).
	calls CallSpanHandler
	// name is informer.listener: handler type + index.
	name     string
	nameAttr attribute.KeyValue

	// pendingNotifications is touched only by pop. Upstream's is a
	// buffer.RingGrowing; see newPending.
	pendingNotifications chunkq.Queue[notification]
	pendingLength        atomic.Int64

	// counts is what Stats reports of this listener's handler calls (ours).
	// Only run writes it, once per call, while pop writes pendingLength
	// and distribute initialPending for every notification: the padding
	// keeps it off their cache lines (false sharing would make each of
	// those writes wait for the line).
	_      [64]byte
	counts handlerCounts
	_      [64]byte

	// The registration's sync, upstream's synctrack.SingleFileTracker:
	// synced is closed, once, when the informer has synced (upstreamSynced,
	// set by watchSynced) and initialPending, the initial-list adds added
	// but not yet returned from the handler, is zero. Whichever of run and
	// watchSynced changes its half last sees the other's and closes it.
	// initialQueued is closed by the informer once every initial add has
	// been added: before that a zero count means nothing yet, not done.
	initialPending atomic.Int64
	upstream       DoneChecker
	upstreamSynced atomic.Bool
	initialQueued  chan struct{}
	synced         chan struct{}
	syncedOnce     sync.Once
	// syncedFlag is set just before synced is closed, for ReadStats: a
	// reader that only wants to know must not receive from the channel,
	// which may belong to a synctest bubble the reader is not in (an
	// informer built in a user's synctest test and read by a metrics
	// collection or a live-view poll from outside it: the runtime ends the
	// process on such a receive). Ours: client-go has no stats.
	syncedFlag atomic.Bool
	syncedName string

	// logger, if set (HandlerOptions.Logger), is given handler panics.
	logger *klog.Logger
	// pendingObs, if set (Observer.Pending), is told the backlog each time
	// add or run changes it (tellPending).
	pendingObs func(int)

	tracer   trace.Tracer
	informer attribute.KeyValue

	resyncLock sync.Mutex
	// Guarded by resyncLock:
	requestedResyncPeriod time.Duration
	resyncPeriod          time.Duration
	nextResync            time.Time
}

func newProcessListener(handler ResourceEventHandler, name string, requested, resyncPeriod time.Duration, now time.Time,
	upstream DoneChecker, tracer trace.Tracer, informerName attribute.KeyValue) *processorListener {
	p := &processorListener{
		nextCh:                make(chan notification),
		addCh:                 make(chan notification, addChBuffer),
		pendingNotifications:  newPending(),
		runFinished:           make(chan struct{}),
		handler:               handler,
		name:                  name,
		nameAttr:              tracing.KeyListener.String(tracing.Value(name)),
		upstream:              upstream,
		initialQueued:         make(chan struct{}),
		synced:                make(chan struct{}),
		syncedName:            upstream.Name() + " + event handler " + handlerOf(name),
		tracer:                tracer,
		informer:              informerName,
		requestedResyncPeriod: requested,
		resyncPeriod:          resyncPeriod,
	}
	p.calls, _ = handler.(CallSpanHandler)
	p.determineNextResync(now)
	return p
}

// HasSynced is true once the informer has synced and every initial-list
// OnAdd sent to this handler has returned: only then can a controller trust
// that its handler has seen the whole initial state.
//
// Mirrors processorListener.HasSynced (upstream uses synctrack.SingleFileTracker).
func (p *processorListener) HasSynced() bool { return IsDone(p) }

// HasSyncedChecker's Done is closed when HasSynced becomes true.
//
// Mirrors processorListener.HasSyncedChecker (upstream shared_informer.go).
func (p *processorListener) HasSyncedChecker() DoneChecker { return p }

// Name is the checker's name: the informer's and this handler's.
func (p *processorListener) Name() string { return p.syncedName }

// Done is closed when the registration has synced.
func (p *processorListener) Done() <-chan struct{} { return p.synced }

// ShutdownChan is closed when the handler's last call has returned after
// the handler was removed (or the informer stopped); it is what
// [ShutDownEventHandler] waits on.
//
// Mirrors processorListener.ShutdownChan (upstream shared_informer.go).
func (p *processorListener) ShutdownChan() <-chan struct{} { return p.runFinished }

func (p *processorListener) markSynced() {
	p.syncedOnce.Do(func() { p.syncedFlag.Store(true); close(p.synced) })
}

// watchSynced waits until the initial adds are queued and the informer has
// synced, then lets the registration sync as soon as the count is zero. It
// gives up when the listener stops first.
//
// Mirrors processorListener.watchSynced (upstream shared_informer.go).
func (p *processorListener) watchSynced() {
	select {
	case <-p.initialQueued:
	case <-p.runFinished:
		return
	}
	select {
	case <-p.upstream.Done():
		p.upstreamSynced.Store(true)
		if p.initialPending.Load() == 0 {
			p.markSynced()
		}
	case <-p.runFinished:
	}
}

// add puts n in addCh for pop. It returns at once while addCh has room
// (addChBuffer); when it is full it waits for pop, which empties addCh
// into its unbounded buffer as fast as it fills, so add never waits for
// the handler.
func (p *processorListener) add(n notification) {
	if n.kind == addKind && n.isInInitialList {
		p.initialPending.Add(1)
	}
	if n.tr != nil {
		t := *n.tr // this listener's own copy of the trace state
		t.waitStart = time.Now()
		n.tr = &t
	}
	p.addCh <- n
	p.tellPending()
}

// pop moves notifications from addCh into the ring buffer and offers the
// oldest on nextCh, until addCh is closed; then it closes nextCh so run ends.
func (p *processorListener) pop() {
	if p.logger != nil {
		defer utilruntime.HandleCrashWithLogger(*p.logger)
	} else {
		defer utilruntime.HandleCrash()
	}
	defer close(p.nextCh)
	var nextCh chan<- notification // nil (disabled) while nothing is ready
	var next notification
	for {
		select {
		case nextCh <- next:
			var ok bool
			if next, ok = p.pendingNotifications.Pop(); ok {
				p.pendingLength.Add(-1)
				p.offered(&next)
			} else {
				nextCh = nil
			}
		case n, ok := <-p.addCh:
			if !ok {
				return
			}
			p.received(&n)
			if nextCh == nil {
				next, nextCh = n, p.nextCh
				p.offered(&next)
			} else {
				p.pendingNotifications.Push(n)
				p.pendingLength.Add(1)
			}
		}
	}
}

// run calls the handler for each notification from nextCh. A panicking
// handler is handled as upstream: utilruntime.HandleCrash re-panics (crashing
// the process) unless utilruntime.ReallyCrash is false, in which case the
// panic is logged and the next notification waits a second.
//
// While the handler's calls are timed (handlerCounts), a busy listener
// reads the clock once per call, not twice: when the next notification is
// already waiting on nextCh as a call ends, the reading that ended that
// call starts the next one. Each call's measured duration then also holds
// the hand-off from the call before (its bookkeeping after the reading,
// the receive, this call's setup: tens of nanoseconds), which no reading
// separated from it. A listener that has to wait for its next
// notification reads the clock again once it has one, so an idle wait is
// never counted as a handler's time, nor is the second's sleep after a
// crash. The hand-off is taken only when nothing else stands between the
// two calls: no span to end or start, no call context to leave or enter
// (CallSpanHandler), no backlog to tell (tellPending with an observer
// that is told). Why: a clock read is a vDSO call of about 30 ns on the
// virtual machines controllers run on, and with four handlers that do
// little the second read of each call was most of what stood between
// the per-handler latency metric and issue 37's bound (docs/performance.md).
// Ours: client-go times no handler call at all.
func (p *processorListener) run() {
	defer close(p.runFinished)
	sleepAfterCrash := false
	var last monoclock.Instant // the reading that ended the previous call
	handOff := false           // last may start the next call
	for {
		var n notification
		var ok bool
		if handOff {
			select {
			case n, ok = <-p.nextCh: // waiting already: the hand-off
			default:
				handOff = false
				n, ok = <-p.nextCh
			}
		} else {
			// Untimed (or not bare): no reading to hand on, so no
			// non-blocking try first, which would cost an untimed call a
			// second channel operation for nothing.
			n, ok = <-p.nextCh
		}
		if !ok {
			return
		}
		if sleepAfterCrash {
			time.Sleep(time.Second)
			handOff = false
		}
		last, handOff = p.call(n, last, handOff, &sleepAfterCrash)
	}
}

// call makes one handler call for n, for run. If handedOff, last is the
// reading that ended the previous call, the moment this one's notification
// was already there to take, and it starts this call if the call is timed
// and has nothing but the hand-off before its handler (run says when). It
// returns the reading that ended this call and whether the next may start
// from it (nothing of this call follows the reading); ended is false when
// the call was not timed.
func (p *processorListener) call(n notification, last monoclock.Instant, handedOff bool, sleepAfterCrash *bool) (end monoclock.Instant, ended bool) {
	*sleepAfterCrash = true
	if p.logger != nil {
		defer utilruntime.HandleCrashWithLogger(*p.logger)
	} else {
		defer utilruntime.HandleCrash()
	}
	p.tellPending()
	span := p.taken(&n)
	// bare: no span, no call context, no backlog told, before the handler
	// or after the reading that ends the call.
	bare := span == nil && !n.untraced && p.pendingObs == nil
	if p.calls != nil && (span != nil || n.untraced) {
		// The handler API carries no context: a handler that asks is
		// told the call's span (or that the call's change is left out
		// of the traces) here. Nothing else is done per call.
		var sc trace.SpanContext
		if span != nil {
			sc = span.SpanContext()
		}
		defer p.calls.EnterCall(sc)()
	}
	// The monotonic clock alone (internal/monoclock): a duration needs no
	// wall-clock read, and this runs per handler call.
	start := last
	timed := p.counts.timing()
	if timed && !(handedOff && bare) {
		start = monoclock.Now()
	}
	defer func() {
		if timed {
			end = monoclock.Now()
			p.counts.record(time.Duration(end - start))
			ended = bare
		} else {
			p.counts.count()
		}
		if span != nil {
			span.End()
		}
	}()
	switch n.kind {
	case addKind:
		p.handler.OnAdd(n.newObj, n.isInInitialList)
		if n.isInInitialList && p.initialPending.Add(-1) == 0 && p.upstreamSynced.Load() {
			p.markSynced()
		}
	case updateKind:
		p.handler.OnUpdate(n.oldObj, n.newObj)
	case deleteKind:
		p.handler.OnDelete(n.oldObj)
	}
	*sleepAfterCrash = false
	return end, ended
}

// The three steps of a traced notification's way through the listener. Each
// ends one wait span, started when the wait began (WithTimestamp), as a child
// of the previous one, and starts the next wait.

var (
	producer = trace.WithSpanKind(trace.SpanKindProducer)
	internal = trace.WithSpanKind(trace.SpanKindInternal)
	consumer = trace.WithSpanKind(trace.SpanKindConsumer)
)

// received: pop took n from addCh. Ends the addCh span.
func (p *processorListener) received(n *notification) {
	if n.tr == nil {
		return
	}
	n.tr.parent = p.waitSpan(n.tr, tracing.SpanAddCh, producer)
	n.tr.pending = int(p.pendingLength.Load())
	n.tr.waitStart = time.Now()
}

// offered: n is first in line and now offered on nextCh. Ends the pop span.
func (p *processorListener) offered(n *notification) {
	if n.tr == nil {
		return
	}
	n.tr.parent = p.waitSpan(n.tr, tracing.SpanPop, internal, tracing.KeyListenerPending.Int(n.tr.pending))
	n.tr.waitStart = time.Now()
}

// taken: run received n. Ends the nextCh span and starts the handler span.
func (p *processorListener) taken(n *notification) trace.Span {
	if n.tr == nil {
		return nil
	}
	parent := p.waitSpan(n.tr, tracing.SpanNextCh, internal)
	name := [...]string{tracing.SpanOnAdd, tracing.SpanOnUpdate, tracing.SpanOnDelete}[n.kind]
	_, span := p.tracer.Start(trace.ContextWithSpanContext(context.Background(), parent), name, consumer,
		trace.WithAttributes(p.informer, p.nameAttr, tracing.KeyObjectKey.String(n.tr.key)))
	return span
}

func (p *processorListener) waitSpan(t *notificationTrace, name string, kind trace.SpanStartOption, extra ...attribute.KeyValue) trace.SpanContext {
	attrs := append([]attribute.KeyValue{p.informer, p.nameAttr, tracing.KeyObjectKey.String(t.key)}, extra...)
	_, span := p.tracer.Start(trace.ContextWithSpanContext(context.Background(), t.parent), name, kind,
		trace.WithTimestamp(t.waitStart), trace.WithAttributes(attrs...))
	span.End()
	return span.SpanContext()
}

// ---- resync schedule ----

func (p *processorListener) shouldResync(now time.Time) bool {
	p.resyncLock.Lock()
	defer p.resyncLock.Unlock()
	return p.resyncPeriod != 0 && !now.Before(p.nextResync)
}

func (p *processorListener) determineNextResync(now time.Time) {
	p.resyncLock.Lock()
	defer p.resyncLock.Unlock()
	p.nextResync = now.Add(p.resyncPeriod)
}

func (p *processorListener) setResyncPeriod(d time.Duration) {
	p.resyncLock.Lock()
	defer p.resyncLock.Unlock()
	p.resyncPeriod = d
}

// sharedProcessor fans notifications out to every listener.
//
// Mirrors the unexported sharedProcessor of upstream shared_informer.go.
type sharedProcessor struct {
	listenersLock sync.RWMutex
	// listenersStarted guards distribute: before run starts the listeners'
	// goroutines, an add would block forever, so distribute waits on
	// listenersCond instead.
	listenersCond *sync.Cond // Wait with listenersLock read-locked
	// Guarded by listenersLock:
	listenersStarted bool
	// listeners maps each listener to whether it is marked as syncing
	// (upstream's syncingListeners, folded into the map's value): true from
	// addListener, as upstream, then whatever the last shouldResync said. So
	// with no resync period (no check ever runs) every listener stays marked
	// and gets every same-resourceVersion update.
	listeners map[*processorListener]bool
	nextIndex int

	// distributed counts distribute calls: one per change HandleDeltas
	// applied (ours, for Stats).
	distributed atomic.Uint64
	// timed is set by the first ReadStats: from then on every listener
	// times its handler calls (handlerCounts; ours). Every handler call of
	// every listener reads it, from the listener's run goroutine, while
	// distribute writes listenersLock and distributed beside it for every
	// change: on one cache line, each read would take the line away from
	// distribute's core and back (false sharing), so it has a line alone.
	timed paddedBool

	wg sync.WaitGroup
}

// paddedBool is an atomic.Bool with a cache line's worth of padding on
// each side, so that no other field shares its line, wherever the struct
// holding it starts.
type paddedBool struct {
	_ [64]byte
	atomic.Bool
	_ [64]byte
}

func newSharedProcessor() *sharedProcessor {
	p := &sharedProcessor{listeners: map[*processorListener]bool{}}
	p.listenersCond = sync.NewCond(p.listenersLock.RLocker())
	return p
}

func (p *sharedProcessor) addListener(l *processorListener) bool {
	p.listenersLock.Lock()
	defer p.listenersLock.Unlock()
	p.listeners[l] = true
	if p.listenersStarted {
		p.wg.Go(l.run)
		p.wg.Go(l.pop)
		p.wg.Go(l.watchSynced)
	}
	return p.listenersStarted
}

// listenerName is the handler's type plus an index, e.g.
// "processor.ResourceEventHandlerFuncs#2": the contract's informer.listener.
func (p *sharedProcessor) listenerName(handler ResourceEventHandler) string {
	p.listenersLock.Lock()
	defer p.listenersLock.Unlock()
	p.nextIndex++
	t := reflect.TypeOf(handler)
	name := "<nil>"
	if n, ok := handler.(interface{ ListenerName() string }); ok {
		// Ours: a handler that wraps another (package dropin's adapter
		// of client-go handlers) names the one it wraps, so a trace shows
		// the user's handler, not the adapter.
		name = n.ListenerName()
	} else if t != nil {
		name = t.String()
	}
	return fmt.Sprintf("%s#%d", name, p.nextIndex-1)
}

// handlerOf is the handler's part of a listenerName: without the "#<n>"
// index, which is ours (the contract's informer.listener), so that a
// registration's checker is named as upstream's ("<informer> + event
// handler <handler>", shared_informer.go, newProcessListener).
func handlerOf(listener string) string {
	if i := strings.LastIndexByte(listener, '#'); i >= 0 {
		return listener[:i]
	}
	return listener
}

// removeListener stops l: pop ends when addCh closes, then run. Removing a
// listener twice, or one never added, is not an error.
func (p *sharedProcessor) removeListener(l *processorListener) {
	p.listenersLock.Lock()
	defer p.listenersLock.Unlock()
	if _, ok := p.listeners[l]; !ok {
		return
	}
	delete(p.listeners, l)
	if p.listenersStarted {
		close(l.addCh)
	} else {
		close(l.runFinished)
	}
}

// distribute hands n to every listener (sync: only to those marked as
// syncing; see listeners). It waits for pop goroutines to take the
// notification, never for a handler.
func (p *sharedProcessor) distribute(n notification, sync bool) {
	p.distributed.Add(1)
	p.listenersLock.RLock()
	defer p.listenersLock.RUnlock()
	for !p.listenersStarted && len(p.listeners) > 0 {
		p.listenersCond.Wait()
	}
	for l, due := range p.listeners {
		if !sync || due {
			l.add(n)
		}
	}
}

// run starts every listener and, when ctx is done, stops them and waits for
// their goroutines.
func (p *sharedProcessor) run(ctx context.Context) {
	p.listenersLock.Lock()
	for l := range p.listeners {
		p.wg.Go(l.run)
		p.wg.Go(l.pop)
		p.wg.Go(l.watchSynced)
	}
	p.listenersStarted = true
	p.listenersCond.Broadcast()
	p.listenersLock.Unlock()

	<-ctx.Done()
	p.listenersLock.Lock()
	for l := range p.listeners {
		close(l.addCh)
	}
	p.listeners = map[*processorListener]bool{}
	p.listenersStarted = false
	p.listenersCond.Broadcast()
	p.listenersLock.Unlock()
	p.wg.Wait()
}

// shouldResync marks which listeners are due for a resync now and schedules
// their next one; the reflector resyncs only if at least one is due.
func (p *sharedProcessor) shouldResync() bool {
	p.listenersLock.Lock()
	defer p.listenersLock.Unlock()
	now := time.Now()
	dueAny := false
	for l := range p.listeners {
		due := l.shouldResync(now)
		p.listeners[l] = due
		if due {
			dueAny = true
			l.determineNextResync(now)
		}
	}
	return dueAny
}

// resyncCheckPeriodChanged refits every listener's resync period to a new,
// shorter check period; logger (the new handler's) gets any warning.
func (p *sharedProcessor) resyncCheckPeriodChanged(logger klog.Logger, check time.Duration) {
	p.listenersLock.RLock()
	defer p.listenersLock.RUnlock()
	for l := range p.listeners {
		l.setResyncPeriod(determineResyncPeriod(logger, l.requestedResyncPeriod, check))
	}
}

// notificationChunkSize is how many notifications one chunk of a
// listener's buffer holds: 256, 14 KiB on 64-bit. A new listener allocates
// nothing until its first backlog, and one chunk then, a quarter of
// upstream's 1,024-slot ring; a backlog of tens of thousands still needs
// only a hundred or so allocations.
const notificationChunkSize = 256

// pendingSpares is how many emptied chunks a listener's buffer keeps:
// 16 chunks of 256 are 4,096 notifications, about 230 KB a listener.
const pendingSpares = 16

// newPending is a listener's empty buffer of notifications: an unbounded
// first-in first-out queue in chunks (internal/chunkq says why not
// upstream's doubling ring, k8s.io/utils/buffer.RingGrowing) that keeps up
// to pendingSpares chunks it empties. A listener's backlog rises and falls
// many times per relist (pop drains it to empty whenever the handler
// catches up), and keeping one spare, as chapter 4's RealFIFO does,
// allocated every rise's chunks again, which measured worse than the
// doubling ring (docs/performance.md). Keeping every chunk (until issue
// 36) held the chunks of the largest backlog for the listener's life: at
// 150,000 objects, a handler slower than the initial list kept up to 10 MB
// of empty chunks, more than upstream's ring of pointers keeps. Sixteen
// spares cover the backlogs that rise and fall in a steady stream;
// a larger backlog allocates its chunks past those as it grows, and lets
// them go as it drains.
func newPending() chunkq.Queue[notification] {
	return chunkq.Queue[notification]{ChunkSize: notificationChunkSize, MaxSpares: pendingSpares}
}
