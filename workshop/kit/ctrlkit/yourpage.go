package ctrlkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

// The controller of exercise 08-liveview/5-your-page: a client-go style
// controller on package dropin, in the participant's own process, whose
// live view the participant's code mounts on its own mux. The scenario
// it plays is built so that what the page ends up showing follows from
// its construction alone, whatever the machine's load: the reconcile the
// updates land in is held until every update has reached the queue (the
// queue's own count says when), so no update can arrive after it ended.
// Its numbers are checked against the traced queue's counters, which are
// kept under the queue's lock and never drop, not against the page's span
// store, which keeps a window of traces.

// YourPageMount is where the exercise mounts the live view on its mux.
const YourPageMount = "/debug/informers/"

// The scenario, by construction.
const (
	yourPageQueue     = "cart-reaper"
	yourPagePods      = 3 // cart-0 … cart-2, there before the informer starts
	yourPageKey       = "default/cart-1"
	yourPageBurst     = 7 // updates of cart-1 while its reconcile is held
	yourPageSlow      = 20 * time.Millisecond
	yourPageWork      = 2 * time.Millisecond // every reconcile's own work
	yourPageAdds      = yourPagePods + 1 + yourPageBurst
	yourPageRounds    = yourPagePods + 2 // the initial ones, the held one, the one after it
	yourPageKeyRounds = 3                // of cart-1: its initial one, the held one, the one after it
)

// YourPage is the controller of exercise 08-liveview/5-your-page, running
// in this process beside the mux it serves: a dropin informer of pods with
// three handlers (the controller's own, which enqueues each pod's key on a
// traced workqueue, and two more that watch the same pods, one of them
// slow), one worker, and an HTTP server on a free loopback port serving
// the mux. Stop ends it all.
type YourPage struct {
	// URL is the server's address, ending in "/": the page is at
	// URL + "debug/informers/" when the mux serves it there.
	URL string
	// Key is the pod whose reconcile the scenario holds.
	Key string

	srv     *apiserver.Server
	inf     cache.SharedIndexInformer
	queue   *dropin.TracedQueue[string]
	tp      *sdktrace.TracerProvider
	reaper  *CartReaper
	auditor *PriceAuditor
	counter *StockCounter
	view    http.Handler // the kit's own view of the process, for State
	stops   []func()
	ran     bool      // the scenario has run
	started time.Time // before anything of this controller

	mu   sync.Mutex
	held *hold // guarded by mu: the reconcile the worker is to hold
}

// CartReaper is the controller's own handler: every add, update and
// delete puts the pod's key on its workqueue.
type CartReaper struct {
	q workqueue.TypedRateLimitingInterface[string]
}

// OnAdd enqueues obj's key.
func (c *CartReaper) OnAdd(obj any, _ bool) { c.enqueue(obj) }

// OnUpdate enqueues newObj's key.
func (c *CartReaper) OnUpdate(_, newObj any) { c.enqueue(newObj) }

// OnDelete enqueues obj's key (a tombstone's too).
func (c *CartReaper) OnDelete(obj any) { c.enqueue(obj) }

func (c *CartReaper) enqueue(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		c.q.Add(key)
	}
}

// PriceAuditor asks an (imagined) price service about every change, from
// its handler: the slow handler of the page.
type PriceAuditor struct{ counted }

// OnAdd waits for the price service.
func (p *PriceAuditor) OnAdd(any, bool) { time.Sleep(yourPageSlow); p.inc() }

// OnUpdate waits for the price service.
func (p *PriceAuditor) OnUpdate(_, _ any) { time.Sleep(yourPageSlow); p.inc() }

// OnDelete waits for the price service.
func (p *PriceAuditor) OnDelete(any) { time.Sleep(yourPageSlow); p.inc() }

// StockCounter counts the changes, at once.
type StockCounter struct{ counted }

// OnAdd counts.
func (s *StockCounter) OnAdd(any, bool) { s.inc() }

// OnUpdate counts.
func (s *StockCounter) OnUpdate(_, _ any) { s.inc() }

// OnDelete counts.
func (s *StockCounter) OnDelete(any) { s.inc() }

// counted counts a handler's finished calls, so that the scenario knows
// when every handler is done.
type counted struct {
	mu sync.Mutex
	n  int
}

func (c *counted) inc() { c.mu.Lock(); c.n++; c.mu.Unlock() }
func (c *counted) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// hold is the scenario's grip on one reconcile: the worker, on taking
// key, closes reached and waits until release is closed (or the
// controller stops).
type hold struct {
	key      string
	reached  chan struct{}
	release  chan struct{}
	released sync.Once
}

func (h *hold) let() { h.released.Do(func() { close(h.release) }) }

// StartYourPage starts exercise 08-liveview/5-your-page's controller with
// mux (on which the participant's Mount has put the live view) and the
// participant's span processors on the controller's tracer provider,
// plays the scenario (RunScenario), and stops it all when t ends. A run
// that does not go as built fails t with a message that starts "kit:".
func StartYourPage(t testing.TB, mux *http.ServeMux, processors []sdktrace.SpanProcessor) *YourPage {
	t.Helper()
	yp, err := NewYourPage(mux, processors)
	if err != nil {
		t.Fatalf("kit: %v", err)
	}
	t.Cleanup(yp.Stop)
	if err := yp.RunScenario(func(string) {}, 0); err != nil {
		t.Fatalf("kit: %v", err)
	}
	return yp
}

// NewYourPage starts the embedded API server with the pods default/cart-0,
// cart-1 and cart-2, serves mux on a free loopback port, and starts the
// controller, its informer and handlers synced. The controller traces
// with a tracer provider of its own, fed by processors alone. Call Stop
// when done, RunScenario to play the scenario.
func NewYourPage(mux *http.ServeMux, processors []sdktrace.SpanProcessor) (yp *YourPage, err error) {
	yp = &YourPage{Key: yourPageKey, started: time.Now()}
	defer func() {
		if err != nil {
			yp.Stop()
		}
	}()
	// The kit's own view of the process (State), made before the informer
	// starts, as the participant's is: a view made later does not see the
	// reflector's first stream.
	yp.view = dropin.LiveViewHandler()
	if yp.srv, err = apiserver.Start(apiserver.Options{}); err != nil {
		return nil, fmt.Errorf("cannot start the embedded API server: %w", err)
	}
	yp.stops = append(yp.stops, yp.srv.Stop)
	for i := range yourPagePods {
		if _, err := yp.srv.Create(kit.Pod("", fmt.Sprintf("cart-%d", i))); err != nil {
			return nil, fmt.Errorf("create pod cart-%d: %w", i, err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("cannot listen on loopback: %w", err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	yp.stops = append(yp.stops, func() { _ = hs.Close() })
	yp.URL = "http://" + ln.Addr().String() + "/"

	var opts []sdktrace.TracerProviderOption
	for _, p := range processors {
		if p != nil {
			opts = append(opts, sdktrace.WithSpanProcessor(p))
		}
	}
	yp.tp = sdktrace.NewTracerProvider(opts...)

	q := dropin.NewTracedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: yourPageQueue})
	yp.queue = q.(*dropin.TracedQueue[string])
	yp.queue.SetTracerProvider(yp.tp)
	yp.reaper, yp.auditor, yp.counter = &CartReaper{q: q}, &PriceAuditor{}, &StockCounter{}

	yp.inf = dropin.NewSharedIndexInformer(yp.srv.ListerWatcher(apiserver.Pods, metav1.NamespaceAll), &corev1.Pod{}, 0, nil)
	_ = yp.inf.(*dropin.Informer).SetTracerProvider(yp.tp)
	var regs []cache.ResourceEventHandlerRegistration
	for _, h := range []cache.ResourceEventHandler{yp.reaper, yp.auditor, yp.counter} {
		reg, err := yp.inf.AddEventHandler(h)
		if err != nil {
			return nil, fmt.Errorf("AddEventHandler: %w", err)
		}
		regs = append(regs, reg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	infDone := make(chan struct{})
	go func() { defer close(infDone); yp.inf.RunWithContext(ctx) }()
	yp.stops = append(yp.stops, func() {
		cancel()
		select {
		case <-infDone:
		case <-time.After(kit.StopTimeout):
		}
	})
	workerDone := make(chan struct{})
	go yp.work(workerDone)
	yp.stops = append(yp.stops, func() {
		yp.mu.Lock()
		if yp.held != nil {
			yp.held.let()
		}
		yp.mu.Unlock()
		q.ShutDown()
		<-workerDone
	})
	if err := waitUntil("the informer and its handlers to sync", func() bool {
		for _, r := range regs {
			if !r.HasSynced() {
				return false
			}
		}
		return yp.inf.HasSynced()
	}); err != nil {
		return nil, err
	}
	return yp, nil
}

// work is the controller's one worker. The reconcile of a held key waits
// for the hold's release: the scenario's grip.
func (yp *YourPage) work(done chan<- struct{}) {
	defer close(done)
	q := yp.queue
	for {
		key, shutdown := q.Get()
		if shutdown {
			return
		}
		yp.mu.Lock()
		h := yp.held
		if h != nil && h.key == key {
			yp.held = nil
		} else {
			h = nil
		}
		yp.mu.Unlock()
		if h != nil {
			close(h.reached)
			<-h.release
		}
		time.Sleep(yourPageWork)
		q.Forget(key)
		q.Done(key)
	}
}

// RunScenario plays the scenario once, telling say what it did: the
// first reconciles of the three pods done, cart-1 updated once and its
// reconcile held, cart-1 updated seven times more while that reconcile
// runs, and the reconcile let go once every update has reached the queue
// and holdFor more has passed (time to watch it on the page: the numbers
// are the same without it). It returns when the worker and every handler
// are idle, after checking the queue's counters against the
// construction: an error says the run did not go as built (not a
// participant's mistake).
func (yp *YourPage) RunScenario(say func(string), holdFor time.Duration) error {
	if yp.ran {
		return errors.New("the scenario runs once per controller")
	}
	yp.ran = true
	st := func() dropin.QueueStats { return yp.queue.Stats() }
	if err := waitUntil("the first reconcile of every pod", func() bool {
		s := st()
		return s.Processed == yourPagePods && s.Depth == 0 && s.Processing == 0
	}); err != nil {
		return err
	}
	say(fmt.Sprintf("the %d pods are reconciled once each", yourPagePods))
	h := &hold{key: yourPageKey, reached: make(chan struct{}), release: make(chan struct{})}
	yp.mu.Lock()
	yp.held = h
	yp.mu.Unlock()
	obj, err := yp.srv.Get(apiserver.Pods, "default", "cart-1")
	if err != nil {
		return err
	}
	p := obj.(*corev1.Pod)
	update := func(i int) error {
		p = p.DeepCopy()
		p.Labels = map[string]string{"round": fmt.Sprint(i)}
		o, err := yp.srv.Update(p)
		if err != nil {
			return fmt.Errorf("update %s: %w", yourPageKey, err)
		}
		p = o.(*corev1.Pod)
		return nil
	}
	if err := update(0); err != nil {
		return err
	}
	select {
	case <-h.reached:
	case <-time.After(kit.WaitTimeout):
		return fmt.Errorf("timed out waiting for the reconcile of %s to begin", yourPageKey)
	}
	say(fmt.Sprintf("%s updated; its reconcile began, and the kit holds it", yourPageKey))
	for i := 1; i <= yourPageBurst; i++ {
		if err := update(i); err != nil {
			return err
		}
	}
	// Every update has been added to the queue while the reconcile is
	// still held: the merges are decided before it can end, however slow
	// the machine.
	if err := waitUntil("every update to reach the queue", func() bool { return st().Adds == yourPageAdds }); err != nil {
		return err
	}
	say(fmt.Sprintf("%s updated %d times more while its reconcile was held; every update has reached the queue", yourPageKey, yourPageBurst))
	time.Sleep(holdFor)
	h.let()
	if err := waitUntil("the worker and every handler to be idle", func() bool {
		s := st()
		return s.Processed == yourPageRounds && s.Depth == 0 && s.Processing == 0 &&
			yp.auditor.calls() == yourPageAdds && yp.counter.calls() == yourPageAdds
	}); err != nil {
		return err
	}
	if s := st(); s.Adds != yourPageAdds || s.Merged != yourPageBurst-1 || s.Processed != yourPageRounds {
		// No count in the message: the merges are an answer.
		return errors.New("the run did not go as built (the queue's counts of adds, merges and reconciles are not what the scenario makes): run it again")
	}
	say("the held reconcile was let go; the controller is idle")
	return nil
}

// YourPageFacts are what the page of a run shows about the questions of
// exercise 08-liveview/5-your-page, from the scenario's construction
// (RunScenario checked it against the queue's counters) and the names
// the page gives: never read from the page's span store, which could
// have lost what it keeps.
type YourPageFacts struct {
	Queue      string // the traced queue's name
	Slow       string // the slow handler's name, as the page writes it
	Reconciles int    // reconciles of Key
	Absorbed   int    // adds merged into the wait of Key's last reconcile: its links
}

// Facts are the run's YourPageFacts; call it after RunScenario.
func (yp *YourPage) Facts() (YourPageFacts, error) {
	f := YourPageFacts{Queue: yourPageQueue, Reconciles: yourPageKeyRounds, Absorbed: yourPageBurst - 1}
	st, err := yp.State()
	if err != nil {
		return f, err
	}
	prefix := handlerTypeName(yp.auditor) + "#"
	for _, inf := range st.Process.Informers {
		for _, h := range inf.Handlers {
			if strings.HasPrefix(h.Name, prefix) {
				f.Slow = h.Name
			}
		}
	}
	if f.Slow == "" {
		return f, errors.New("the page lists no slow handler")
	}
	return f, nil
}

// PageAgrees reports whether st, a state of the page, lists what the
// construction says of the reconciles: every reconcile of the queue, and
// Key's last one with its links. The list is read from the span store
// (dropin.LiveViewSpanProcessor), a window of the last traces; an error
// says what it lost.
func (yp *YourPage) PageAgrees(st livepage.ProcessState) error {
	mine := yp.Reconciles(st)
	// The errors name no count of the construction: a checker prints
	// them, and the counts are the exercise's answers.
	if len(mine) != yourPageRounds {
		return fmt.Errorf("it lists %s reconciles than the queue counted (%d traces evicted)", fewerOrMore(len(mine), yourPageRounds), st.TracesEvicted)
	}
	for _, r := range mine { // newest first
		if r.Key == yourPageKey {
			if r.Links != yourPageBurst-1 {
				return fmt.Errorf("the newest reconcile of %s has %s links than the queue merged adds into its wait", yourPageKey, fewerOrMore(r.Links, yourPageBurst-1))
			}
			return nil
		}
	}
	return fmt.Errorf("it lists no reconcile of %s", yourPageKey)
}

// ReadMounted reads the page as the mux serves it at YourPageMount: the
// page itself, then its state. It waits up to a few seconds for the
// state's reconcile list to agree with the construction (PageAgrees: the
// span of the last reconcile ends just after the queue counts it), and
// returns the last state read; err says what is wrong with the mux's
// answers, in words for the participant.
func (yp *YourPage) ReadMounted() (livepage.ProcessState, error) {
	page := yp.URL + YourPageMount[1:]
	res, err := http.Get(page)
	if err != nil {
		return livepage.ProcessState{}, err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		return livepage.ProcessState{}, fmt.Errorf("GET %s answered %s (%s), not the page", YourPageMount, res.Status, res.Header.Get("Content-Type"))
	}
	var st livepage.ProcessState
	deadline := time.Now().Add(settleTimeout)
	for {
		st = livepage.ProcessState{}
		res, err := http.Get(page + "api/state")
		if err != nil {
			return st, err
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return st, fmt.Errorf("GET %sapi/state answered %s", YourPageMount, res.Status)
		}
		if err := json.Unmarshal(b, &st); err != nil || st.Process.Queues == nil {
			return st, fmt.Errorf("GET %sapi/state answered something other than the live view's state", YourPageMount)
		}
		// Without a span store fed by this run's tracer provider (no
		// LiveViewSpanProcessor) the list has none of this run's
		// reconciles, and never will: the first ones ended long before
		// the scenario did. Only the newest may still be ending.
		if len(yp.Reconciles(st)) == 0 || yp.PageAgrees(st) == nil || time.Now().After(deadline) {
			return st, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// settleTimeout is how long ReadMounted waits for the page's reconcile
// list to catch up with the queue's counters.
const settleTimeout = 5 * time.Second

// Reconciles are the reconciles of this run's queue that st lists
// (newest first). The page's span store belongs to the process, and
// keeps the reconciles of an earlier controller of the same process (a
// test run again with -count): those started before this one are left
// out.
func (yp *YourPage) Reconciles(st livepage.ProcessState) []livepage.Reconcile {
	var mine []livepage.Reconcile
	for _, r := range st.Reconciles {
		if r.Queue == yourPageQueue && !r.Start.Before(yp.started) {
			mine = append(mine, r)
		}
	}
	return mine
}

func fewerOrMore(n, want int) string {
	if n < want {
		return "fewer"
	}
	return "more"
}

// State is what the page shows now, read through the kit's own
// LiveViewHandler (the participant's mux aside).
func (yp *YourPage) State() (livepage.ProcessState, error) {
	rec := httptest.NewRecorder()
	yp.view.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/state", nil))
	var st livepage.ProcessState
	if rec.Code != http.StatusOK {
		return st, fmt.Errorf("the live view answered %d", rec.Code)
	}
	return st, json.Unmarshal(rec.Body.Bytes(), &st)
}

// Stop stops the controller, the informer, the server of the mux and the
// API server.
func (yp *YourPage) Stop() {
	for i := len(yp.stops) - 1; i >= 0; i-- {
		yp.stops[i]()
	}
	yp.stops = nil
	if yp.tp != nil {
		_ = yp.tp.Shutdown(context.Background())
	}
}

// handlerTypeName is dropin's name for a handler of h's type, without
// the "#<n>" of its place: the package path and the type's name.
func handlerTypeName(h any) string {
	t := reflect.TypeOf(h)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.PkgPath() + "." + t.Name()
}

// waitUntil polls cond every few milliseconds until it holds, and says
// what it waited for after kit.WaitTimeout.
func waitUntil(what string, cond func() bool) error {
	deadline := time.Now().Add(kit.WaitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return nil
}
