// Package livecontrols is the live view's controls on the embedded
// server (trace-demo --ui without --cluster): buttons that create, update
// and delete pods, burst, make the third handler slow or fast, add and
// remove handlers, drop the watch, force a relist, stop the server from
// streaming, restart it, run a controller, and run the lesson script, the
// same lessons ([lessons.Lessons]) the terminal run runs. Each button runs
// under one lock, so two presses never interleave their writes.
package livecontrols

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/demo"
	"github.com/informer-anatomy/informer-anatomy/demo/lessons"
	"github.com/informer-anatomy/informer-anatomy/demo/liveview"
	"github.com/informer-anatomy/informer-anatomy/demo/result"
	"github.com/informer-anatomy/informer-anatomy/demo/terminal"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

const (
	// SlowDelay is the tunable handler's time per call once made slow.
	SlowDelay = 10 * time.Millisecond
	// MaxBurst is the largest burst the page accepts.
	MaxBurst = 100_000
	// MaxExtraHandlers is how many handlers the page adds at most. Every
	// listener adds about five spans to each event's trace, and the span
	// store keeps fewer traces as they grow (liveview.SpansPerTrace);
	// before the bound, 487 handlers and a burst held 2.9 GB.
	MaxExtraHandlers = 8
)

// Run is the embedded run behind the page: it starts a [lessons.Env] with
// the tunable third handler, attaches its informer to s with the
// controls, and runs until ctx ends (Ctrl-C or --duration); then it waits
// for a control or the lesson script under way, which see ctx end too and
// stop within moments, so that none writes to a stopped server or waits
// on a stopped informer.
func Run(ctx context.Context, o lessons.Options, s *liveview.Session) (result.Result, error) {
	o.Tunable = true
	e, err := lessons.Start(ctx, o)
	if err != nil {
		return result.Result{}, err
	}
	defer e.Stop()
	le := &liveEmbedded{env: e, session: s, printer: o.Printer, ctx: ctx}
	srv := e.Server()
	s.Attach(le.env.Informer(), e.Probe(), e.CacheBytes(), "pods in namespace "+lessons.Namespace,
		fmt.Sprintf("embedded API server at %s; queue %s", e.URL(), e.Queue()), le.controls())
	s.SetSourceNote(func() string {
		if srv.WatchListEnabled() {
			return "; the server streams"
		}
		return "; the server cannot stream (422 to a stream)"
	})
	o.Printer.Status("embedded API server at %s; namespace %q; queue %s; the page drives it", e.URL(), lessons.Namespace, e.Queue())
	<-ctx.Done()
	le.busy.Lock()
	defer le.busy.Unlock()
	e.StopInformer()
	return result.Result{HandlerCalls: e.HandlerCalls(), Informer: lessons.MainInformer}, nil
}

// liveEmbedded is the embedded run behind the page.
type liveEmbedded struct {
	env     *lessons.Env
	session *liveview.Session
	printer *terminal.Printer
	// ctx is the run's: when it ends (Ctrl-C, --duration) every control
	// and the lesson script stop.
	ctx context.Context

	busy sync.Mutex // one control at a time; the lesson script holds it throughout
	// Guarded by busy:
	made    int
	created []string // pods the page created, not yet deleted by it
	extras  []processor.ResourceEventHandlerRegistration
}

// lookFor is a lesson's "Look for" text as one line.
func lookFor(lesson string) string {
	l, _ := lessons.Find(lesson)
	return strings.Join(strings.Fields(strings.TrimPrefix(strings.TrimSpace(l.LookFor), "Look for:")), " ")
}

// controls are the page's buttons on the embedded server. Each runs under
// busy, so two presses never interleave their writes.
func (le *liveEmbedded) controls() []liveview.Control {
	return []liveview.Control{
		{Name: "create-pod", Label: "create a pod", LookFor: lookFor("basic"),
			Do: le.locked(le.createPod)},
		{Name: "update-pod", Label: "update a pod", LookFor: "one MODIFIED event: HandleDeltas counts one more change, each handler one more call",
			Do: le.locked(le.updatePod)},
		{Name: "delete-pod", Label: "delete a pod", LookFor: "one DELETED event: the indexer shrinks by one, every handler gets OnDelete",
			Do: le.locked(le.deletePod)},
		{Name: "burst", Label: "burst of N updates", Param: "how many updates of demo/web-1", Max: MaxBurst,
			LookFor: "the queue box and every listener's row (addCh, pending, nextCh, handler) while the watch delivers the burst, and the handlers' counters once it has drained: where does the burst wait, and which handler gets how many calls? The counters count every update, traced or not. " + burstLimits,
			Do:      le.locked(le.burst)},
		{Name: "slow", Label: "make the handler slow",
			LookFor: "from its next call on, " + demo.TunableListener + " takes " + SlowDelay.String() + " (its max time shows it). Press a burst next and watch the queue and every listener's row: which boxes fill, and does any other handler or the queue wait for the slow one? Then compare its events' waterfalls with the other listeners' spans",
			Do:      le.slow},
		{Name: "fast", Label: "make the handler fast", LookFor: "from its next call on, " + demo.TunableListener + " returns at once: watch its row empty; its mean time falls as fast calls add up, its max stays",
			Do: le.fast},
		{Name: "add-handler", Label: "add a handler", LookFor: fmt.Sprintf("a new listener row, last, and new rows in the event list: click one to read its waterfall (its root span, the listeners in it), and compare the HandleDeltas box before and after. The page adds %d at most", MaxExtraHandlers),
			Do: le.locked(le.addHandler)},
		{Name: "remove-handler", Label: "remove a handler", LookFor: "the last *demo.extraHandler row disappears; the others go on",
			Do: le.locked(le.removeHandler)},
		{Name: "drop-watch", Label: "drop the watch", LookFor: "the reflector box: its STREAM, LIST and WATCH counters, and its last requests, oldest first. Which request does it send next, from which resourceVersion, and is any change lost or repeated? (A watch that ended within a second with no event is a \"very short watch\", which docs/03-reflector.md treats apart)",
			Do: le.locked(le.dropWatch)},
		{Name: "relist", Label: "compact + force a 410 relist",
			LookFor: "the reflector box's last requests: how does the rewatch from a compacted resourceVersion end, and how does the reflector then fetch the whole state again, from which resourceVersion? Then click an object's event that follows, and read its trace and its links",
			Do:      le.locked(le.relist)},
		{Name: "no-stream", Label: "server cannot stream (on/off)",
			LookFor: "switched on, the server refuses every stream with 422 Invalid, as a kube-apiserver whose WatchList feature is off, and the control forces a relist: read the reflector's requests after it, and the root span of its objects' traces. Switched off, the server streams again: what happens to the open watch, and to the next relist?",
			Do:      le.locked(le.noStream)},
		{Name: "restart", Label: "restart the API server", LookFor: "the open WATCH ends with the server; read the reflector's requests once it is back: does it fetch the whole state again, or go on from where it was? (The server kept its history; a request sent while it is down fails with connection refused)",
			Do: le.locked(le.restart)},
		{Name: "controller", Label: "run a controller",
			LookFor: "a *lessons.controllerHandler row appears with its workqueue and reconciles: demo/ctl is created, then updated 5 times during its first 200 ms reconcile. Count its adds, the adds merged and the reconciles in its row; click demo/ctl's create to see the trace go on to workqueue.process",
			Do:      le.locked(le.controller)},
		{Name: "handoff", Label: "hand off to a second controller",
			LookFor: "controller A reconciles lessons/handoff and writes lessons/handoff-out, stamped with its reconcile's span (tracing.k8s.io/traceparent); controller B's informer receives that write: click lessons/handoff-out's ADDED to see B's trace down to its reconcile, and its root's link to the span its object's annotation names as its writer (unverified: whoever can write the object can name any span): a link, not a parent; click the link to open A's trace",
			Do:      le.locked(le.handoff)},
		{Name: "lessons", Label: "run the lesson script", LookFor: "each lesson's line is printed in the terminal as it runs, and its result after it; watch the boxes move. The script can run again: each lesson makes its objects anew",
			Do: le.lessons},
	}
}

func (le *liveEmbedded) createPod(context.Context, int) (string, error) {
	le.made++
	name := fmt.Sprintf("live-%d", le.made)
	if err := le.env.CreatePod(name); err != nil {
		return "", err
	}
	le.created = append(le.created, name)
	return "created " + lessons.Namespace + "/" + name + " (ADDED)", nil
}

func (le *liveEmbedded) updatePod(context.Context, int) (string, error) {
	le.made++
	return "updated " + lessons.Namespace + "/web-1 (MODIFIED)", le.env.UpdatePod("web-1", fmt.Sprint(le.made))
}

func (le *liveEmbedded) deletePod(context.Context, int) (string, error) {
	if len(le.created) == 0 {
		return "", liveview.Conflict("no pod created from the page is left to delete: press \"create a pod\" first")
	}
	name := le.created[len(le.created)-1]
	le.created = le.created[:len(le.created)-1]
	return "deleted " + lessons.Namespace + "/" + name + " (DELETED)", le.env.DeletePod(name)
}

// slow makes the tunable handler slow, under busy (a burst checks its
// bound, then writes, with the handler's time as it was: made slow in
// between, a burst taken for a fast handler would drain at the slow one's
// pace), and only if what already waits drains within MaxDrain at
// SlowDelay per call: the bound a burst keeps. Before, "slow" after a
// burst of 100,000 left a quarter of an hour of backlog, and every later
// burst was refused 503 for as long.
func (le *liveEmbedded) slow(ctx context.Context, n int) (string, error) {
	return le.locked(le.makeSlow)(ctx, n)
}

func (le *liveEmbedded) makeSlow(context.Context, int) (string, error) {
	waiting, err := le.backlog()
	if err != nil {
		return "", err
	}
	if drain := time.Duration(waiting) * SlowDelay; drain > MaxDrain {
		return "", liveview.Busy("refused for now: %d changes still wait for the informer's slowest listener; at %v per call %s would take %v over them, past the page's bound of %v (%d changes): wait for them to drain, then make it slow",
			waiting, SlowDelay, demo.TunableListener, drain.Round(time.Second), MaxDrain, int(MaxDrain/SlowDelay))
	}
	le.env.Third().SetDelay(SlowDelay)
	return fmt.Sprintf("%s now takes %v per call", demo.TunableListener, SlowDelay), nil
}

func (le *liveEmbedded) fast(context.Context, int) (string, error) {
	le.env.Third().SetDelay(0)
	return demo.TunableListener + " now returns at once", nil
}

func (le *liveEmbedded) addHandler(context.Context, int) (string, error) {
	if len(le.extras) >= MaxExtraHandlers {
		return "", liveview.Conflict("the page has added %d handlers, its most: press \"remove a handler\" first", MaxExtraHandlers)
	}
	reg, name, err := le.env.AddExtraHandler()
	if err != nil {
		return "", err
	}
	le.extras = append(le.extras, reg)
	return "added " + name + ": it is given every cached object as a synthetic add", nil
}

func (le *liveEmbedded) removeHandler(context.Context, int) (string, error) {
	if len(le.extras) == 0 {
		return "", liveview.Conflict("no handler added from the page is left to remove: press \"add a handler\" first")
	}
	reg := le.extras[len(le.extras)-1]
	le.extras = le.extras[:len(le.extras)-1]
	return "removed the last *demo.extraHandler", le.env.Informer().RemoveEventHandler(reg)
}

func (le *liveEmbedded) dropWatch(context.Context, int) (string, error) {
	le.env.Server().CloseWatches()
	return "every watch of the API server ended", nil
}

func (le *liveEmbedded) relist(context.Context, int) (string, error) {
	if err := le.env.ForceRelist(); err != nil {
		return "", err
	}
	return "history compacted and watches closed: the rewatch gets 410 Expired", nil
}

func (le *liveEmbedded) noStream(context.Context, int) (string, error) {
	if !le.env.Server().WatchListEnabled() {
		le.env.Server().SetWatchListEnabled(true)
		return "the server streams again; the reflector keeps its watch, and its next relist streams", nil
	}
	le.env.Server().SetWatchListEnabled(false)
	if err := le.env.ForceRelist(); err != nil {
		return "", err
	}
	return "the server now refuses streams (422 Invalid); history compacted and watches closed: the reflector's next stream is refused", nil
}

func (le *liveEmbedded) restart(context.Context, int) (string, error) {
	le.env.Server().Stop()
	return "API server stopped and started again", le.env.Server().Restart()
}

// controller runs the controller lesson and adds its workqueue to its
// listener's row.
func (le *liveEmbedded) controller(context.Context, int) (string, error) {
	l, _ := lessons.Find("controller")
	out, err := l.Run(le.env)
	if err != nil {
		return "", err
	}
	le.session.SetWorkqueue(func() (string, liveview.WorkqueueState, bool) {
		st, ok := le.env.ControllerStats()
		if !ok {
			return "", liveview.WorkqueueState{}, false
		}
		return lessons.ControllerListener, liveview.WorkqueueState{Name: "demo-controller", Depth: st.Depth, Adds: st.Adds,
			Merged: st.Merged, Reconciles: st.Processed, LastMicros: float64(st.ProcessLast.Nanoseconds()) / 1e3}, true
	})
	return out.Line, nil
}

// handoff runs the handoff lesson: two controllers of their own, the
// second linked to the first's write.
func (le *liveEmbedded) handoff(context.Context, int) (string, error) {
	l, _ := lessons.Find("handoff")
	out, err := l.Run(le.env)
	if err != nil {
		return "", err
	}
	return out.Line, nil
}

// lessons starts the lesson script, which holds busy until it is done.
func (le *liveEmbedded) lessons(context.Context, int) (string, error) {
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
	return "lesson script started: " + strings.Join(lessons.Names(), ", "), nil
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
// drains in MaxDrain. Without them a slow handler and repeated bursts grew
// the demo by hundreds of megabytes, and the page showed the backlog
// draining for many minutes.
const (
	maxBacklog = MaxBurst
	// MaxDrain is the longest the slow handler may take over what waits.
	MaxDrain = time.Minute
)

// burstLimits is the part of the burst's "look for" that says what the
// page refuses, and what happens past the embedded server's watch buffer.
var burstLimits = fmt.Sprintf("The page refuses a burst that would leave more than %d changes waiting for the informer's slowest listener, or, with the handler slow, more than it handles in %v (%d at %v per call). "+
	"If the informer falls %d events behind the API server, the embedded server ends its watch, as a real one ends a watch that cannot keep up, and the reflector recovers as after \"drop the watch\", or, when the server's history (its last %d events) no longer reaches back that far, as after \"compact + force a 410 relist\": then the listeners get fewer than N calls. The burst's answer says when that happened",
	maxBacklog, MaxDrain, int(MaxDrain/SlowDelay), SlowDelay, apiserver.WatchBuffer, apiserver.DefaultHistoryLimit)

// backlog is how many changes wait for the slowest listener now: those
// the API server has made and the watch has not yet delivered (the
// server's resourceVersion ahead of the reflector's: a burst's answer
// comes once its updates are written, before the informer has them all),
// the queue, and the fullest listener's addCh and pending.
func (le *liveEmbedded) backlog() (int, error) {
	st, err := processor.ReadStats(le.env.Informer())
	if err != nil {
		return 0, err
	}
	most := 0
	for _, l := range st.Listeners {
		most = max(most, l.AddCh+l.Pending)
	}
	n := st.QueueLen + most
	server, err1 := strconv.Atoi(le.env.Server().ResourceVersion())
	seen, err2 := strconv.Atoi(le.env.Probe().State().ResourceVersion)
	if err1 == nil && err2 == nil && server > seen {
		n += server - seen
	}
	return n, nil
}

// burst writes n updates of demo/web-1, if the page can show them
// honestly (burstLimits), and stops when ctx ends.
func (le *liveEmbedded) burst(ctx context.Context, n int) (string, error) {
	limit, why := maxBacklog, "the page's bound on what the informer holds in memory"
	if d := le.env.Third().Delay(); d > 0 && int(MaxDrain/d) < limit {
		limit = int(MaxDrain / d)
		why = fmt.Sprintf("what %s, at %v per call, handles in %v", demo.TunableListener, d, MaxDrain)
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
	before := le.env.Probe().State()
	for i := range n {
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("stopped after %d of %d updates: %w", i, n, err)
		}
		le.made++
		if err := le.env.UpdatePod("web-1", fmt.Sprint(le.made)); err != nil {
			return "", fmt.Errorf("update %d of %d: %w", i+1, n, err)
		}
	}
	msg := fmt.Sprintf("%d updates of %s/web-1 written", n, lessons.Namespace)
	if after := le.env.Probe().State(); after.Watches > before.Watches || after.Lists > before.Lists || after.Phase != "WATCH" {
		msg += fmt.Sprintf("; meanwhile the informer's watch ended (the embedded server ends a watch that falls %d events behind) and the reflector is at %s now: the listeners may get fewer than %d calls", apiserver.WatchBuffer, after.Phase, n)
	}
	return msg, nil
}

// runLessons runs the lesson script on the page's informer, printing
// each lesson's line, what to look for and its result in the terminal,
// as the scripted run does.
func (le *liveEmbedded) runLessons() {
	for _, l := range lessons.Lessons() {
		if le.ctx.Err() != nil {
			le.printer.Status("lesson script stopped before %s", l.Name)
			return
		}
		if _, err := le.env.RunLesson(l, lessons.Show{LookFor: true}); err != nil {
			if le.ctx.Err() != nil {
				le.printer.Status("lesson script stopped during %s", l.Name)
				return
			}
			le.printer.Warn("lesson script: %v", err)
			return
		}
	}
	le.printer.Status("lesson script done")
}

// Texts returns the page's controls as GET /api/controls serves them,
// with no run behind them (Do is nil): their names, labels and "look
// for" texts, which a page shows before any press. The workshop's tests
// read them: no text may give a live view exercise's answer away.
func Texts() []liveview.Control {
	cs := (&liveEmbedded{}).controls()
	for i := range cs {
		cs[i].Do = nil
	}
	return cs
}
