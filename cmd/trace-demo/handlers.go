package main

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
)

// The demo's handlers. Each is its own type because the contract's
// informer.listener is the handler's type name plus an index: a reader of a
// waterfall sees "*main.slowHandler#2", not "ResourceEventHandlerFuncs#2".

// seen records, per object key, the resourceVersion a handler last saw (and
// forgets deleted keys), so the demo can wait until a handler has caught up
// with the server instead of sleeping.
type seen struct {
	mu         sync.Mutex
	rv         map[string]string // guarded by mu
	calls      int               // guarded by mu
	tombstones int               // guarded by mu
	resyncs    int               // guarded by mu: updates whose old and new RV are the same
	resynced   map[string]bool   // guarded by mu: keys that had such an update
}

func newSeen() *seen { return &seen{rv: map[string]string{}, resynced: map[string]bool{}} }

func (s *seen) add(obj any) {
	key, rv := keyAndRV(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.rv[key] = rv
}

func (s *seen) update(old, obj any) {
	key, rv := keyAndRV(obj)
	_, oldRV := keyAndRV(old)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if rv == oldRV {
		s.resyncs++
		s.resynced[key] = true
	}
	s.rv[key] = rv
}

func (s *seen) delete(obj any) {
	if t, ok := obj.(deltafifo.DeletedFinalStateUnknown); ok {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.calls++
		s.tombstones++
		delete(s.rv, t.Key)
		return
	}
	key, _ := keyAndRV(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	delete(s.rv, key)
}

func (s *seen) wasResynced(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resynced[key]
}

// state returns a copy of what the handler has seen.
func (s *seen) state() (rv map[string]string, calls, tombstones, resyncs int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rv = make(map[string]string, len(s.rv))
	for k, v := range s.rv {
		rv[k] = v
	}
	return rv, s.calls, s.tombstones, s.resyncs
}

func keyAndRV(obj any) (key, rv string) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "<not an object>", ""
	}
	if m.GetNamespace() != "" {
		return m.GetNamespace() + "/" + m.GetName(), m.GetResourceVersion()
	}
	return m.GetName(), m.GetResourceVersion()
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

func (h *slowHandler) OnAdd(obj any, _ bool) { h.sleep(obj); h.add(obj) }
func (h *slowHandler) OnUpdate(old, obj any) { h.sleep(obj); h.update(old, obj) }
func (h *slowHandler) OnDelete(obj any)      { h.sleep(obj); h.delete(obj) }

// sleep is the handler's slowness, skipped for the coalesce lesson's filler
// pods, which are there to fill the queue, not the ring buffer.
func (h *slowHandler) sleep(obj any) {
	if m, err := meta.Accessor(obj); err == nil && m.GetLabels()[fillerLabel] == "true" {
		return
	}
	time.Sleep(h.delay)
}
func (h *slowHandler) handlerState() *seen { return h.seen }

// lateHandler is added after the informer has synced: it is given the cache's
// objects as synthetic adds (root span AddEventHandler), and it is the one
// handler with a resync period.
type lateHandler struct{ *seen }

func (h lateHandler) OnAdd(obj any, _ bool) { h.add(obj) }
func (h lateHandler) OnUpdate(old, obj any) { h.update(old, obj) }
func (h lateHandler) OnDelete(obj any)      { h.delete(obj) }
func (h lateHandler) handlerState() *seen   { return h.seen }
