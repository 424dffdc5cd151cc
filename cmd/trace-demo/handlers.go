package main

import (
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/internal/app/terminal"
)

// The demo's handlers. Each is its own type because the contract's
// informer.listener is the handler's type name plus an index: a reader of a
// waterfall sees "*main.slowHandler#2", not "ResourceEventHandlerFuncs#2".

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

// slowHandler takes delay per call, as a handler that calls out to an API
// would. Its notifications wait in its own ring buffer (the pop span); the
// informer and the other listeners go on (processor.go: processorListener).
type slowHandler struct {
	*seen
	delay time.Duration
}

func newSlowHandler(d time.Duration) *slowHandler { return &slowHandler{seen: newSeen(), delay: d} }

func (h *slowHandler) OnAdd(obj any, _ bool) { time.Sleep(h.delay); h.add(obj) }
func (h *slowHandler) OnUpdate(old, obj any) { time.Sleep(h.delay); h.update(old, obj) }
func (h *slowHandler) OnDelete(obj any)      { time.Sleep(h.delay); h.delete(obj) }
func (h *slowHandler) handlerState() *seen   { return h.seen }

// lateHandler is added after the informer has synced: it is given the cache's
// objects as synthetic adds (root span AddEventHandler), and it is the one
// handler with a resync period.
type lateHandler struct{ *seen }

func (h lateHandler) OnAdd(obj any, _ bool) { h.add(obj) }
func (h lateHandler) OnUpdate(old, obj any) { h.update(old, obj) }
func (h lateHandler) OnDelete(obj any)      { h.delete(obj) }
func (h lateHandler) handlerState() *seen   { return h.seen }
