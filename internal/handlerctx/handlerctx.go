// Package handlerctx tells a traced workqueue which traced call it is being
// called from. client-go's handler interface (OnAdd, OnUpdate, OnDelete)
// and its workqueue (Add) carry no context.Context, so a handler's
// queue.Add(key) cannot hand the queue its span the way Go code normally
// would. Instead, whoever makes a traced call on a goroutine (dropin's
// handler adapter around the handler call, which chapter 5 tells its span
// through processor.CallSpanHandler, and only while a traced queue is
// alive; dropin's traced queue between Get and Done) registers that call's
// span context for the goroutine, and the queue looks it up by goroutine.
//
// The span contract (docs/span-contract.md, "After the handler")
// leaves the mechanism to the implementation and asks for its cost: with
// nothing registered (tracing off) [Current] is one atomic load. With
// something registered, [Enter] and [Current] each read the goroutine's id
// from the first line of runtime.Stack (about a microsecond) and take a
// lock: paid only by traced handler calls and traced Adds, next to the cost
// of their spans.
//
// A registration may carry an invalid span context: the goroutine is in a
// call made while tracing was on that is not traced, because an
// informer's trace filter left its object out (or, on an informer with a
// filter set, the sampler, which the informer cannot tell apart; a call
// the sampler left out on an informer without one registers nothing). What the
// call starts must then stay untraced too: a traced queue's Add there
// makes no span, rather than a trace of its own the filter refused.
// [Current] returns it as (invalid, true), and only then: with tracing off
// nothing registers.
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
	// byGoroutine holds each goroutine's registrations in force, the
	// latest last (guarded by mu). A slice and not a single value because
	// they need not end in the order they began: a worker may Get two keys
	// and call Done on the first one first; ending one takes out that one
	// only, and the latest still in force stays current.
	byGoroutine = map[uint64][]registration{}
	// lastToken tells registrations apart (guarded by mu).
	lastToken uint64
)

type registration struct {
	sc    trace.SpanContext
	token uint64
}

// Enter registers sc as the current traced call of the calling goroutine
// until exit is called (from any goroutine; a second call does nothing).
// The latest registration of a goroutine still in force is its current
// one.
func Enter(sc trace.SpanContext) (exit func()) {
	id := goroutineID()
	mu.Lock()
	lastToken++
	token := lastToken
	byGoroutine[id] = append(byGoroutine[id], registration{sc: sc, token: token})
	mu.Unlock()
	active.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			regs := byGoroutine[id]
			for i, r := range regs {
				if r.token == token {
					regs = append(regs[:i], regs[i+1:]...)
					break
				}
			}
			if len(regs) == 0 {
				delete(byGoroutine, id)
			} else {
				byGoroutine[id] = regs
			}
			mu.Unlock()
			active.Add(-1)
		})
	}
}

// Current returns the span context registered on the calling goroutine
// last and still in force, if any. ok with an invalid span context: the
// goroutine is in an untraced call (see the package doc).
//
// [Untraced] reads the same answer for a caller about to trace.
func Current() (trace.SpanContext, bool) {
	if active.Load() == 0 {
		return trace.SpanContext{}, false
	}
	id := goroutineID()
	mu.RLock()
	defer mu.RUnlock()
	regs := byGoroutine[id]
	if len(regs) == 0 {
		return trace.SpanContext{}, false
	}
	return regs[len(regs)-1].sc, true
}

// Untraced reports whether the calling goroutine is in a call registered
// as untraced (Enter with an invalid span context), and otherwise returns
// the parent Current would: a traced call's span context, or an invalid
// one when nothing is registered.
func Untraced() (parent trace.SpanContext, untraced bool) {
	sc, ok := Current()
	return sc, ok && !sc.IsValid()
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
