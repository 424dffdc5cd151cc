package demo

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/demo/terminal"
)

// The demo's handlers. Each is its own type because the contract's
// informer.listener is the handler's type name plus an index: a reader of a
// waterfall sees "*demo.slowHandler#2", not "ResourceEventHandlerFuncs#2".

// seen records, per object key, the resourceVersion a handler last saw (and
// forgets deleted keys), so the demo can wait until a handler has caught up
// with the server instead of sleeping.
type seen struct {
	// calls counts every call, traced or not: with a trace filter the
	// spans see only the selected objects.
	calls atomic.Int64
	// adds counts OnAdd calls; resyncs OnUpdate calls whose old and new
	// resourceVersion are the same (a resync, or a relist's unchanged
	// object).
	adds, resyncs atomic.Int64
	mu            sync.Mutex
	rv            map[string]string // guarded by mu
	resynced      map[string]bool   // guarded by mu: keys that had an update with old RV == new RV
	// tombstoned: keys whose OnDelete was given a DeletedFinalStateUnknown.
	tombstoned map[string]bool // guarded by mu
}

func newSeen() *seen {
	return &seen{rv: map[string]string{}, resynced: map[string]bool{}, tombstoned: map[string]bool{}}
}

func (s *seen) add(obj any) {
	s.calls.Add(1)
	s.adds.Add(1)
	key, rv := keyAndRV(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv[key] = rv
}

func (s *seen) update(old, obj any) {
	s.calls.Add(1)
	key, rv := keyAndRV(obj)
	_, oldRV := keyAndRV(old)
	s.mu.Lock()
	defer s.mu.Unlock()
	if rv == oldRV {
		s.resynced[key] = true
		s.resyncs.Add(1)
	}
	s.rv[key] = rv
}

// delete forgets the key, for an object or its DeletedFinalStateUnknown.
func (s *seen) delete(obj any) {
	s.calls.Add(1)
	key, _ := keyAndRV(obj)
	_, tomb := obj.(deltafifo.DeletedFinalStateUnknown)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rv, key)
	if tomb {
		s.tombstoned[key] = true
	}
}

// forgetTombstone forgets that key came as a tombstone: a lesson run again
// asks about its own run.
func (s *seen) forgetTombstone(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tombstoned, key)
}

func (s *seen) wasTombstoned(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tombstoned[key]
}

// tombstonesSeen names the handlers whose OnDelete got key as a
// DeletedFinalStateUnknown.
func tombstonesSeen(hs []stateful, key string) []string {
	var out []string
	for _, h := range hs {
		if h.handlerState().wasTombstoned(key) {
			out = append(out, terminal.ShortListener(fmt.Sprintf("%T", h)))
		}
	}
	return out
}

func (s *seen) wasResynced(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resynced[key]
}

// state returns a copy of what the handler has seen: key → resourceVersion.
func (s *seen) state() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.rv)
}

// keyAndRV is the object's store key (chapter 4's tombstone-aware key func)
// and resourceVersion ("" for a tombstone).
func keyAndRV(obj any) (key, rv string) {
	key, err := deltafifo.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return "<not an object>", ""
	}
	if m, err := meta.Accessor(obj); err == nil {
		rv = m.GetResourceVersion()
	}
	return key, rv
}

// caughtUp reports whether every handler has seen exactly want.
func caughtUp(handlers []stateful, want map[string]string) bool {
	for _, h := range handlers {
		if !maps.Equal(h.handlerState().state(), want) {
			return false
		}
	}
	return true
}

// countedCalls sums the calls the handlers counted.
func countedCalls(hs []stateful) int64 {
	var n int64
	for _, h := range hs {
		n += h.handlerState().calls.Load()
	}
	return n
}

// stateful is every demo handler: the demo waits on what it has seen.
type stateful interface{ handlerState() *seen }

// auditHandler is a fast handler, as most should be: it records and returns.
type auditHandler struct{ *seen }

func (h auditHandler) OnAdd(obj any, _ bool) { h.add(obj) }
func (h auditHandler) OnUpdate(old, obj any) { h.update(old, obj) }
func (h auditHandler) OnDelete(obj any)      { h.delete(obj) }
func (h auditHandler) handlerState() *seen   { return h.seen }

// metricsHandler is a second fast handler: with it and auditHandler a
// reader sees that one slow listener does not hold up the others.
type metricsHandler struct{ *seen }

func (h metricsHandler) OnAdd(obj any, _ bool) { h.add(obj) }
func (h metricsHandler) OnUpdate(old, obj any) { h.update(old, obj) }
func (h metricsHandler) OnDelete(obj any)      { h.delete(obj) }
func (h metricsHandler) handlerState() *seen   { return h.seen }

// slowHandler takes its delay per call, as a handler that calls out to an
// API would. Its notifications wait in its own ring buffer (the pop span);
// the informer and the other listeners go on (processor.go:
// processorListener). The scripted run's third handler.
type slowHandler struct {
	*seen
	delay
}

func (h *slowHandler) OnAdd(obj any, _ bool) { h.wait(); h.add(obj) }
func (h *slowHandler) OnUpdate(old, obj any) { h.wait(); h.update(old, obj) }
func (h *slowHandler) OnDelete(obj any)      { h.wait(); h.delete(obj) }
func (h *slowHandler) handlerState() *seen   { return h.seen }

// delay is a third handler's time per call, changed while it runs: the
// slow-handler lesson makes the live view's tunable handler slow for its
// duration, and the page's button at any time.
type delay struct{ d atomic.Int64 }

func (d *delay) wait() {
	if t := d.Delay(); t > 0 {
		time.Sleep(t)
	}
}

// Delay is the handler's time per call now.
func (d *delay) Delay() time.Duration { return time.Duration(d.d.Load()) }

// SetDelay sets it and returns what it was.
func (d *delay) SetDelay(t time.Duration) time.Duration { return time.Duration(d.d.Swap(int64(t))) }

// restoreDelay sets it back to prev if it is still t: a button pressed
// meanwhile wins.
func (d *delay) restoreDelay(t, prev time.Duration) { d.d.CompareAndSwap(int64(t), int64(prev)) }

// lateHandler is added after the informer has synced: it is given the cache's
// objects as synthetic adds (root span AddEventHandler), and it is the one
// handler with a resync period.
type lateHandler struct{ *seen }

func (h lateHandler) OnAdd(obj any, _ bool) { h.add(obj) }
func (h lateHandler) OnUpdate(old, obj any) { h.update(old, obj) }
func (h lateHandler) OnDelete(obj any)      { h.delete(obj) }
func (h lateHandler) handlerState() *seen   { return h.seen }

// TunableListener is the page's name for the tunable handler's listener:
// its type and its index among the informer's handlers.
const TunableListener = "*demo.tunableHandler#2"

// tunableHandler is the live view's third handler: fast until the page's
// button (or the slow-handler lesson, for its duration) makes it slow, to
// show its ring buffer filling while the others stay empty.
type tunableHandler struct {
	*seen
	delay
}

func (h *tunableHandler) OnAdd(obj any, _ bool) { h.wait(); h.add(obj) }
func (h *tunableHandler) OnUpdate(old, obj any) { h.wait(); h.update(old, obj) }
func (h *tunableHandler) OnDelete(obj any)      { h.wait(); h.delete(obj) }
func (h *tunableHandler) handlerState() *seen   { return h.seen }

// extraHandler is a handler added from the page (and removable from it).
type extraHandler struct{ *seen }

func (h extraHandler) OnAdd(obj any, _ bool) { h.add(obj) }

func (h extraHandler) OnUpdate(old, obj any) { h.update(old, obj) }

func (h extraHandler) OnDelete(obj any) { h.delete(obj) }

// AddExtraHandler adds to the main informer a handler of its own
// (*demo.extraHandler), with no resync: the live view's "add a handler".
// It returns the registration and the listener's name.
func (e *Env) AddExtraHandler() (processor.ResourceEventHandlerRegistration, string, error) {
	// No resync, as the page's other listeners: AddEventHandler would take
	// the factory's 1 s default (there for the resync lesson) and put a
	// resync row in the event list every second.
	reg, err := e.informer.AddEventHandlerWithResyncPeriod(&extraHandler{newSeen()}, 0)
	if err != nil {
		return nil, "", err
	}
	name := "*demo.extraHandler"
	if st, err := processor.ReadStats(e.informer); err == nil && len(st.Listeners) > 0 {
		name = st.Listeners[len(st.Listeners)-1].Name // sorted by index: the newest is last
	}
	return reg, name, nil
}

// Handlers are the three handlers the demo gives an informer it watches
// (the cluster mode's too): two fast ones and one that takes slow per
// call. Each keeps what it has seen, so the demo can wait until they have
// caught up instead of sleeping.
type Handlers struct {
	audit auditHandler
	all   []stateful
}

// NewHandlers makes the three, the third taking slow per call.
func NewHandlers(slow time.Duration) *Handlers {
	s := &slowHandler{seen: newSeen()}
	s.SetDelay(slow)
	h := &Handlers{audit: auditHandler{newSeen()}}
	h.all = []stateful{h.audit, metricsHandler{newSeen()}, s}
	return h
}

// AddTo adds them to inf, with inf's default resync.
func (h *Handlers) AddTo(inf processor.SharedIndexInformer) error {
	for _, x := range h.all {
		if _, err := inf.AddEventHandler(x.(processor.ResourceEventHandler)); err != nil {
			return err
		}
	}
	return nil
}

// Seen is what the first of them has seen: key → resourceVersion.
func (h *Handlers) Seen() map[string]string { return h.audit.state() }

// CaughtUp reports whether every one of them has seen exactly want.
func (h *Handlers) CaughtUp(want map[string]string) bool { return caughtUp(h.all, want) }

// Calls is how many calls they counted, traced or not.
func (h *Handlers) Calls() int64 { return countedCalls(h.all) }

// KeyAndRV is an object's store key and resourceVersion, a tombstone's
// by its last known state.
func KeyAndRV(obj any) (key, rv string) { return keyAndRV(obj) }

// Until polls cond until it holds; it gives up with an error naming what
// was awaited after 20 s, and at once when ctx ends.
func Until(ctx context.Context, what string, cond func() bool) error { return until(ctx, what, cond) }
