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
)

// Seen records, per object key, the resourceVersion a handler last saw (and
// forgets deleted keys), so the demo can wait until a handler has caught up
// with the server instead of sleeping.
type Seen struct {
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

// NewSeen is an empty record.
func NewSeen() *Seen {
	return &Seen{rv: map[string]string{}, resynced: map[string]bool{}, tombstoned: map[string]bool{}}
}

// Add records an OnAdd of obj.
func (s *Seen) Add(obj any) {
	s.calls.Add(1)
	s.adds.Add(1)
	key, rv := KeyAndRV(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv[key] = rv
}

// Update records an OnUpdate from old to obj; the same resourceVersion on
// both is a resync (or a relist's unchanged object).
func (s *Seen) Update(old, obj any) {
	s.calls.Add(1)
	key, rv := KeyAndRV(obj)
	_, oldRV := KeyAndRV(old)
	s.mu.Lock()
	defer s.mu.Unlock()
	if rv == oldRV {
		s.resynced[key] = true
		s.resyncs.Add(1)
	}
	s.rv[key] = rv
}

// Delete forgets the key, for an object or its DeletedFinalStateUnknown.
func (s *Seen) Delete(obj any) {
	s.calls.Add(1)
	key, _ := KeyAndRV(obj)
	_, tomb := obj.(deltafifo.DeletedFinalStateUnknown)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rv, key)
	if tomb {
		s.tombstoned[key] = true
	}
}

// ForgetTombstone forgets that key came as a tombstone: a lesson run again
// asks about its own run.
func (s *Seen) ForgetTombstone(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tombstoned, key)
}

// WasTombstoned reports whether an OnDelete got key as a
// DeletedFinalStateUnknown.
func (s *Seen) WasTombstoned(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tombstoned[key]
}

// WasResynced reports whether key had an OnUpdate with an unchanged
// resourceVersion.
func (s *Seen) WasResynced(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resynced[key]
}

// Versions returns a copy of what the handler has seen: key → resourceVersion.
func (s *Seen) Versions() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.rv)
}

// Calls is how many calls were recorded, traced or not.
func (s *Seen) Calls() int64 { return s.calls.Load() }

// Adds is how many of them were OnAdd.
func (s *Seen) Adds() int64 { return s.adds.Load() }

// Resyncs is how many were OnUpdate with an unchanged resourceVersion.
func (s *Seen) Resyncs() int64 { return s.resyncs.Load() }

// KeyAndRV is the object's store key (chapter 4's tombstone-aware key func)
// and resourceVersion ("" for a tombstone).
func KeyAndRV(obj any) (key, rv string) {
	key, err := deltafifo.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return "<not an object>", ""
	}
	if m, err := meta.Accessor(obj); err == nil {
		rv = m.GetResourceVersion()
	}
	return key, rv
}

// Handler is every demo handler: an informer's event handler that records
// what it has seen, so the demo waits on it.
type Handler interface {
	processor.ResourceEventHandler
	Record() *Seen
}

// CaughtUp reports whether every handler has seen exactly want.
func CaughtUp(hs []Handler, want map[string]string) bool {
	for _, h := range hs {
		if !maps.Equal(h.Record().Versions(), want) {
			return false
		}
	}
	return true
}

// CountedCalls sums the calls the handlers counted.
func CountedCalls(hs []Handler) int64 {
	var n int64
	for _, h := range hs {
		n += h.Record().Calls()
	}
	return n
}

// auditHandler is a fast handler, as most should be: it records and returns.
type auditHandler struct{ s *Seen }

func (h auditHandler) OnAdd(obj any, _ bool) { h.s.Add(obj) }
func (h auditHandler) OnUpdate(old, obj any) { h.s.Update(old, obj) }
func (h auditHandler) OnDelete(obj any)      { h.s.Delete(obj) }
func (h auditHandler) Record() *Seen         { return h.s }

// metricsHandler is a second fast handler: with it and auditHandler a
// reader sees that one slow listener does not hold up the others.
type metricsHandler struct{ s *Seen }

func (h metricsHandler) OnAdd(obj any, _ bool) { h.s.Add(obj) }
func (h metricsHandler) OnUpdate(old, obj any) { h.s.Update(old, obj) }
func (h metricsHandler) OnDelete(obj any)      { h.s.Delete(obj) }
func (h metricsHandler) Record() *Seen         { return h.s }

// NewAudit is a fast handler: "demo.auditHandler" in spans.
func NewAudit() Handler { return auditHandler{NewSeen()} }

// NewMetrics is a second fast handler: "demo.metricsHandler".
func NewMetrics() Handler { return metricsHandler{NewSeen()} }

// Delayed is a handler that takes a delay per call, changed while it runs.
type Delayed interface {
	Handler
	// Delay is the handler's time per call now.
	Delay() time.Duration
	// SetDelay sets it and returns what it was.
	SetDelay(time.Duration) time.Duration
	// RestoreDelay sets it back to prev if it is still t: a button pressed
	// meanwhile wins.
	RestoreDelay(t, prev time.Duration)
}

// delay is a third handler's time per call, changed while it runs: the
// slow-handler lesson makes the live view's tunable handler slow for its
// duration, and the page's button at any time.
type delay struct{ d atomic.Int64 }

func (d *delay) wait() {
	if t := d.Delay(); t > 0 {
		time.Sleep(t)
	}
}

func (d *delay) Delay() time.Duration                   { return time.Duration(d.d.Load()) }
func (d *delay) SetDelay(t time.Duration) time.Duration { return time.Duration(d.d.Swap(int64(t))) }
func (d *delay) RestoreDelay(t, prev time.Duration)     { d.d.CompareAndSwap(int64(t), int64(prev)) }

// slowHandler takes its delay per call, as a handler that calls out to an
// API would. Its notifications wait in its own ring buffer (the pop span);
// the informer and the other listeners go on (processor.go:
// processorListener). The scripted run's third handler.
type slowHandler struct {
	s *Seen
	delay
}

func (h *slowHandler) OnAdd(obj any, _ bool) { h.wait(); h.s.Add(obj) }
func (h *slowHandler) OnUpdate(old, obj any) { h.wait(); h.s.Update(old, obj) }
func (h *slowHandler) OnDelete(obj any)      { h.wait(); h.s.Delete(obj) }
func (h *slowHandler) Record() *Seen         { return h.s }

// NewSlow is the scripted run's third handler ("*demo.slowHandler"),
// taking d per call.
func NewSlow(d time.Duration) Delayed {
	h := &slowHandler{s: NewSeen()}
	h.SetDelay(d)
	return h
}

// TunableListener is the page's name for the tunable handler's listener:
// its type and its index among the informer's handlers.
const TunableListener = "*demo.tunableHandler#2"

// tunableHandler is the live view's third handler: fast until the page's
// button (or the slow-handler lesson, for its duration) makes it slow, to
// show its ring buffer filling while the others stay empty.
type tunableHandler struct {
	s *Seen
	delay
}

func (h *tunableHandler) OnAdd(obj any, _ bool) { h.wait(); h.s.Add(obj) }
func (h *tunableHandler) OnUpdate(old, obj any) { h.wait(); h.s.Update(old, obj) }
func (h *tunableHandler) OnDelete(obj any)      { h.wait(); h.s.Delete(obj) }
func (h *tunableHandler) Record() *Seen         { return h.s }

// NewTunable is the live view's third handler ("*demo.tunableHandler"),
// fast until told otherwise.
func NewTunable() Delayed { return &tunableHandler{s: NewSeen()} }

// lateHandler is added after the informer has synced: it is given the cache's
// objects as synthetic adds (root span AddEventHandler), and it is the one
// handler with a resync period.
type lateHandler struct{ s *Seen }

func (h lateHandler) OnAdd(obj any, _ bool) { h.s.Add(obj) }
func (h lateHandler) OnUpdate(old, obj any) { h.s.Update(old, obj) }
func (h lateHandler) OnDelete(obj any)      { h.s.Delete(obj) }
func (h lateHandler) Record() *Seen         { return h.s }

// NewLate is the late-handler lesson's handler. A pointer, so that its
// listener is "*demo.lateHandler#N", as the lesson's text says.
func NewLate() Handler { return &lateHandler{NewSeen()} }

// extraHandler is a handler added from the page (and removable from it).
type extraHandler struct{ s *Seen }

func (h extraHandler) OnAdd(obj any, _ bool) { h.s.Add(obj) }
func (h extraHandler) OnUpdate(old, obj any) { h.s.Update(old, obj) }
func (h extraHandler) OnDelete(obj any)      { h.s.Delete(obj) }
func (h extraHandler) Record() *Seen         { return h.s }

// ExtraListener is the type part of an extra handler's listener name.
const ExtraListener = "*demo.extraHandler"

// NewExtra is the live view's "add a handler" ("*demo.extraHandler").
func NewExtra() Handler { return &extraHandler{NewSeen()} }

// Handlers are the three handlers the demo gives an informer it watches
// (the cluster mode's too): two fast ones and one that takes slow per
// call. Each keeps what it has seen, so the demo can wait until they have
// caught up instead of sleeping.
type Handlers struct {
	all []Handler
}

// NewHandlers makes the three, the third taking slow per call.
func NewHandlers(slow time.Duration) *Handlers {
	return &Handlers{all: []Handler{NewAudit(), NewMetrics(), NewSlow(slow)}}
}

// AddTo adds them to inf, with inf's default resync.
func (h *Handlers) AddTo(inf processor.SharedIndexInformer) error {
	for _, x := range h.all {
		if _, err := inf.AddEventHandler(x); err != nil {
			return err
		}
	}
	return nil
}

// Seen is what the first of them has seen: key → resourceVersion.
func (h *Handlers) Seen() map[string]string { return h.all[0].Record().Versions() }

// CaughtUp reports whether every one of them has seen exactly want.
func (h *Handlers) CaughtUp(want map[string]string) bool { return CaughtUp(h.all, want) }

// Calls is how many calls they counted, traced or not.
func (h *Handlers) Calls() int64 { return CountedCalls(h.all) }

// StepTimeout bounds every wait of a lesson, and of the cluster run's
// catching up: a broken step ends the demo with an error naming what it
// waited for, instead of hanging it.
const StepTimeout = 20 * time.Second

// Until polls cond; after StepTimeout it gives up with an error naming what
// was awaited, so a broken step ends the demo instead of hanging it; when
// ctx ends (Ctrl-C) it stops at once, with an error that wraps ctx's.
func Until(ctx context.Context, what string, cond func() bool) error {
	return Poll(ctx, what, StepTimeout, 0, nil, cond)
}

// Poll is Until with its own timeout, and slow called once if cond still
// does not hold after slowAfter (0: never).
func Poll(ctx context.Context, what string, timeout, slowAfter time.Duration, slow func(), cond func() bool) error {
	start := time.Now()
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		waited := time.Since(start)
		if waited > timeout {
			return fmt.Errorf("gave up after %v waiting for %s", timeout, what)
		}
		if slow != nil && slowAfter > 0 && waited > slowAfter {
			slow()
			slow = nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stopped while waiting for %s: %w", what, ctx.Err())
		case <-t.C:
		}
	}
	return nil
}
