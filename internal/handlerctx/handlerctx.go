// Package handlerctx tells a traced workqueue which traced call it is being
// called from. client-go's handler interface (OnAdd, OnUpdate, OnDelete)
// and its workqueue (Add) carry no context.Context, so a handler's
// queue.Add(key) cannot hand the queue its span the way Go code normally
// would. Instead, whoever makes a traced call on a goroutine (chapter 5's
// processorListener.run around the handler, dropin's traced queue between
// Get and Done) registers that call's span context for the goroutine, and
// the queue looks it up by goroutine.
//
// The span contract (docs/span-contract.md, "After the handler")
// leaves the mechanism to the implementation and asks for its cost: with
// nothing registered (tracing off) [Current] is one atomic load. With
// something registered, [Enter] and [Current] each read the goroutine's id
// from the first line of runtime.Stack (about a microsecond) and take a
// lock: paid only by traced handler calls and traced Adds, next to the cost
// of their spans.
//
// Go has no goroutine-local storage on purpose; this is the narrow case the
// contract allows because the APIs in between cannot be changed. Nothing
// else may use it: data inside the informer carries its span context
// itself.
package handlerctx

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/trace"
)

var (
	// active counts the registrations in force; Current reads nothing
	// else while it is zero.
	active atomic.Int64

	mu sync.RWMutex
	// byGoroutine maps a goroutine's id to the span context registered on
	// it last (guarded by mu).
	byGoroutine = map[uint64]trace.SpanContext{}
)

// Enter registers sc as the current traced call of the calling goroutine
// until exit is called (from any goroutine). Registrations nest: exit puts
// back what was registered before.
func Enter(sc trace.SpanContext) (exit func()) {
	id := goroutineID()
	mu.Lock()
	prev, had := byGoroutine[id]
	byGoroutine[id] = sc
	mu.Unlock()
	active.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			if had {
				byGoroutine[id] = prev
			} else {
				delete(byGoroutine, id)
			}
			mu.Unlock()
			active.Add(-1)
		})
	}
}

// Current returns the span context registered on the calling goroutine,
// if any.
func Current() (trace.SpanContext, bool) {
	if active.Load() == 0 {
		return trace.SpanContext{}, false
	}
	id := goroutineID()
	mu.RLock()
	sc, ok := byGoroutine[id]
	mu.RUnlock()
	return sc, ok
}

// Active is how many registrations are in force (for tests: it must come
// back to zero).
func Active() int64 { return active.Load() }

var goroutinePrefix = []byte("goroutine ")

// goroutineID parses "goroutine 123 [running]:", the first line
// runtime.Stack writes for the calling goroutine.
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, goroutinePrefix)
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		panic("handlerctx: cannot read the goroutine id from runtime.Stack: " + err.Error())
	}
	return id
}
