// Package handlerctx tells a traced workqueue which traced call it is being
// called from. client-go's handler interface (OnAdd, OnUpdate, OnDelete)
// and its workqueue (Add) carry no context.Context, so a handler's
// queue.Add(key) cannot hand the queue its span the way Go code normally
// would. Instead, whoever makes a call on a goroutine while tracing is on
// (dropin's handler adapter around the handler call, which chapter 5 tells
// its span through processor.CallSpanHandler, and only while a traced
// queue is alive; dropin's traced queue between Get and Done) registers
// that call's span context for the goroutine, and the queue looks it up by
// goroutine.
//
// A registration's span context may be unsampled: the call belongs to a
// change the informer left out of the traces, because its object's root
// was dropped by the sampler or left out by the informer's trace filter.
// What the call starts must then follow that decision: a traced queue's
// Add there makes no span, rather than a trace of its own that the sampler
// would decide on again (one in a hundred of them kept, at 1%, each a trace
// that starts at workqueue.add with no watch event above it). [Untraced]
// says so: registered, and not sampled. The span context is invalid for a
// handler call (the informer has no span to give), and a valid unsampled
// one for a reconcile ([Unsampled]), so that the spans a reconcile starts
// under it are dropped by a ParentBased sampler as well.
//
// The cost, which the span contract (docs/span-contract.md, "After the
// handler") asks to be said: with nothing registered (tracing off, no
// traced queue) [Current] is one atomic load. With something registered,
// [Register], [Token.Exit] and [Current] each find the goroutine from the
// runtime's pointer to it (a few instructions of assembly on amd64 and
// arm64; other architectures read the goroutine's id from runtime.Stack,
// about a microsecond) and take one of 64 locks, picked by goroutine;
// nothing is allocated once a goroutine has registered once.
//
// A registration must be ended before its goroutine exits: the runtime
// gives an exited goroutine's descriptor to a new goroutine, which would
// find the registration as its own. Handler calls end theirs on return;
// a worker that calls Get and exits without Done breaks the workqueue's
// contract anyway (the key stays processing for good).
//
// Go has no goroutine-local storage on purpose; this is the narrow case the
// contract allows because the APIs in between cannot be changed. Nothing
// else may use it: data inside the informer carries its span context
// itself.
package handlerctx

import (
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/trace"
)

var (
	// active counts the registrations in force; Current reads nothing
	// else while it is zero.
	active atomic.Int64
	// lastSeq tells registrations apart.
	lastSeq atomic.Uint64
	// shards hold each goroutine's registrations in force, the latest
	// last, picked by goroutine so that handler calls and workers on
	// different goroutines rarely wait on one lock.
	shards [numShards]shard
)

const numShards = 64

type shard struct {
	mu sync.Mutex
	// byG holds, guarded by mu, each goroutine's registrations. A slice
	// and not a single value because they need not end in the order they
	// began: a worker may Get two keys and call Done on the first one
	// first; ending one takes out that one only, and the latest still in
	// force stays current. An emptied slice stays in the map with its
	// array (see keepEmpty), so a goroutine's next registration allocates
	// nothing.
	byG map[uintptr][]registration
	_   [40]byte // a shard to a cache line: no false sharing between locks
}

func shardOf(g uintptr) *shard {
	// Goroutine descriptors are a few hundred bytes apart: a
	// multiplicative hash spreads them over the shards.
	return &shards[(uint64(g)*0x9E3779B97F4A7C15)>>58]
}

type registration struct {
	sc  trace.SpanContext
	seq uint64
}

// Token ends one registration ([Token.Exit]). The zero Token ends nothing.
type Token struct {
	g   uintptr
	seq uint64
}

// Register registers sc as the current call of the calling goroutine until
// the returned Token's Exit. The latest registration of a goroutine still
// in force is its current one.
func Register(sc trace.SpanContext) Token {
	g := goroutineKey()
	t := Token{g: g, seq: lastSeq.Add(1)}
	s := shardOf(g)
	s.mu.Lock()
	if s.byG == nil {
		s.byG = map[uintptr][]registration{}
	}
	s.byG[g] = append(s.byG[g], registration{sc: sc, seq: t.seq})
	s.mu.Unlock()
	active.Add(1)
	return t
}

// Exit ends the registration, from any goroutine; a second call does
// nothing.
func (t Token) Exit() {
	if t.seq == 0 {
		return
	}
	s := shardOf(t.g)
	found := false
	s.mu.Lock()
	regs := s.byG[t.g]
	for i := len(regs) - 1; i >= 0; i-- {
		if regs[i].seq == t.seq {
			copy(regs[i:], regs[i+1:])
			regs[len(regs)-1] = registration{}
			regs = regs[:len(regs)-1]
			found = true
			break
		}
	}
	switch {
	case !found:
	case len(regs) == 0 && !keepEmpty:
		delete(s.byG, t.g)
	default:
		s.byG[t.g] = regs
	}
	s.mu.Unlock()
	if found {
		active.Add(-1)
	}
}

// Enter is [Register] with the Exit as a func, for callers that hold one
// (a closure and a method value: an allocation; the handler adapter keeps
// its Token instead).
func Enter(sc trace.SpanContext) (exit func()) { return Register(sc).Exit }

// Current returns the span context registered on the calling goroutine
// last and still in force, if any. ok with an unsampled span context: the
// goroutine is in a call left out of the traces (see the package doc).
//
// [Untraced] reads the same answer for a caller about to trace.
func Current() (trace.SpanContext, bool) {
	if active.Load() == 0 {
		return trace.SpanContext{}, false
	}
	g := goroutineKey()
	s := shardOf(g)
	s.mu.Lock()
	defer s.mu.Unlock()
	regs := s.byG[g]
	if len(regs) == 0 {
		return trace.SpanContext{}, false
	}
	return regs[len(regs)-1].sc, true
}

// Untraced reports whether the calling goroutine is in a call registered
// as left out of the traces (a span context that is not sampled), and
// otherwise returns the parent Current would: a traced call's span
// context, or an invalid one when nothing is registered.
func Untraced() (parent trace.SpanContext, untraced bool) {
	sc, ok := Current()
	return sc, ok && !sc.IsSampled()
}

// Unsampled returns a new valid span context whose sampled flag is off:
// the parent of what follows from a change whose trace was not kept. A
// span started under it by a ParentBased sampler (the SDK's default) is
// dropped without the sampler being asked again, so the change's trace
// stays absent, as its root was. The IDs are random: nothing of the trace
// was recorded, so no ID would be found anywhere, and a writer's
// traceparent stamped with it still tells the next controller that this
// change was not kept.
func Unsampled() trace.SpanContext {
	var tid trace.TraceID
	var sid trace.SpanID
	binary.LittleEndian.PutUint64(tid[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(tid[8:], rand.Uint64())
	binary.LittleEndian.PutUint64(sid[:], rand.Uint64())
	// All zero bits (once in 2^64) would be an invalid ID.
	tid[0] |= 1
	sid[0] |= 1
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid})
}

// Active is how many registrations are in force (for tests: it must come
// back to zero).
func Active() int64 { return active.Load() }
