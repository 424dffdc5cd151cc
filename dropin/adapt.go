package dropin

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"

	"go.opentelemetry.io/otel/trace"
	"k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/internal/handlerctx"
	"github.com/informer-anatomy/informer-anatomy/internal/queuetrace"
)

// handler carries a client-go handler into chapter 5. The two interfaces
// have the same methods, so the wrapper exists for one reason: a deleted
// object whose final state was missed arrives as our
// [deltafifo.DeletedFinalStateUnknown], and client-go code type-asserts
// [cache.DeletedFinalStateUnknown]; without the conversion every such
// delete would be dropped by the user's `if !ok { return }`.
type handler struct {
	h    cache.ResourceEventHandler
	name string
	// call is the registration of the call in progress (EnterCall).
	call *callSlot
}

// callSlot holds a listener's registration from EnterCall to its exit.
// Chapter 5 runs one listener's handler on one goroutine, one call at a
// time, so one slot per listener is exact, and exit is made once, here:
// a func made per call would be an allocation per event.
type callSlot struct {
	tok  handlerctx.Token
	exit func()
}

func newCallSlot() *callSlot {
	c := &callSlot{}
	c.exit = func() {
		c.tok.Exit()
		c.tok = handlerctx.Token{}
	}
	return c
}

func wrapHandler(h cache.ResourceEventHandler) handler {
	return handler{h: h, name: nameForHandler(h), call: newCallSlot()}
}

func (w handler) OnAdd(obj any, isInInitialList bool) { w.h.OnAdd(obj, isInInitialList) }
func (w handler) OnUpdate(oldObj, newObj any)         { w.h.OnUpdate(oldObj, newObj) }
func (w handler) OnDelete(obj any)                    { w.h.OnDelete(toClientGoTombstone(obj)) }

var _ processor.CallSpanHandler = handler{}

// EnterCall registers the handler call chapter 5 is about to make for the
// calling goroutine (internal/handlerctx), so that a traced queue's Add
// made in it finds its parent span, or finds that the call's change was
// left out of the traces (sc invalid: its root was dropped by the sampler
// or left out by the trace filter) and traces nothing either
// (docs/span-contract.md, "After the handler"). It does so only while a
// traced queue is alive in the process: with none nothing would ever look
// the registration up, and a call costs one atomic load here.
func (w handler) EnterCall(sc trace.SpanContext) (exit func()) {
	if !queuetrace.Alive() || w.call == nil {
		return noExit
	}
	w.call.tok = handlerctx.Register(sc)
	return w.call.exit
}

// HandlerCallLink gives a handler made for chapter 5's informer itself
// (a processor.ResourceEventHandler given to processor's AddEventHandler,
// not a client-go handler given to this package's informer, which is
// linked already) the link to a traced queue: embedded in the handler's
// type, it makes the handler a processor.CallSpanHandler whose calls are
// registered as this package's adapter registers a client-go handler's, so
// that a traced queue's Add made in them is a child of the call. The
// demo's controller lessons use it.
//
// Ours: client-go's handlers are told nothing of traces.
type HandlerCallLink struct{}

// EnterCall is [processor.CallSpanHandler]'s: see handler.EnterCall. (It
// holds no slot, so each registered call allocates its exit.)
func (HandlerCallLink) EnterCall(sc trace.SpanContext) (exit func()) {
	if !queuetrace.Alive() {
		return noExit
	}
	return handlerctx.Enter(sc)
}

func noExit() {}

// ListenerName is the name chapter 5 gives this listener in its spans
// (informer.listener) and stats: the user's handler, not this wrapper.
func (w handler) ListenerName() string { return w.name }

// Format prints the user's handler: chapter 5's "was not added … because it
// has stopped already" error formats the handler with %v, and client-go's
// names the user's one.
func (w handler) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, fmt.FormatString(f, verb), w.h)
}

func toClientGoTombstone(obj any) any {
	if t, ok := obj.(deltafifo.DeletedFinalStateUnknown); ok {
		return cache.DeletedFinalStateUnknown{Key: t.Key, Obj: t.Obj}
	}
	return obj
}

func toOurTombstone(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return deltafifo.DeletedFinalStateUnknown{Key: t.Key, Obj: t.Obj}
	}
	return obj
}

// nameForHandler names a handler the way client-go's logs do: the handler's
// package and type, or for ResourceEventHandlerFuncs the functions it holds
// (their common package-qualified prefix, or all of them joined with "+"),
// so that two controllers' Funcs handlers are told apart in a trace.
//
// Mirrors the unexported nameForHandler of upstream event_handler_name.go.
//
// Ours on top: a [NamedHandler]'s name, and for controller-runtime's
// source.EventHandler the handler it wraps (nameForControllerRuntime).
func nameForHandler(h cache.ResourceEventHandler) string {
	if n, ok := h.(namedHandler); ok {
		return n.name
	}
	if name := nameForControllerRuntime(h); name != "" {
		return name
	}
	switch f := h.(type) {
	case nil:
		return "<nil>"
	case cache.ResourceEventHandlerFuncs:
		return orTypeName(namesOfFuncs(f.AddFunc, f.UpdateFunc, f.DeleteFunc), h)
	case *cache.ResourceEventHandlerFuncs:
		if f != nil {
			return orTypeName(namesOfFuncs(f.AddFunc, f.UpdateFunc, f.DeleteFunc), h)
		}
	}
	t := reflect.TypeOf(h)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := t.Name()
	if pkg := t.PkgPath(); pkg != "" {
		name = pkg + "." + name
	}
	return orTypeName(name, h)
}

func orTypeName(name string, h cache.ResourceEventHandler) string {
	if name == "" {
		return fmt.Sprintf("%T", h)
	}
	return name
}

// namesOfFuncs: "pkg.(*T)" when every function is a method or closure of
// the same qualifier, else the full names joined with "+".
func namesOfFuncs(fs ...any) string {
	var names []string
	for _, f := range fs {
		v := reflect.ValueOf(f)
		if !v.IsValid() || v.IsNil() {
			continue
		}
		fn := runtime.FuncForPC(v.Pointer())
		if fn == nil {
			continue
		}
		names = append(names, fn.Name())
	}
	return qualifierOf(names)
}

// qualifierOf is what function names have in common: "pkg.(*T)" when every
// one is a method or closure of the same qualifier (what precedes its last
// "."), else the names joined with "+".
func qualifierOf(names []string) string {
	qualifier := ""
	for _, name := range names {
		q := name
		if i := strings.LastIndexByte(q, '.'); i > 0 {
			q = q[:i]
		}
		if qualifier == "" {
			qualifier = q
		} else if q != qualifier {
			return strings.Join(names, "+")
		}
	}
	return qualifier
}

func toOurIndexers(in cache.Indexers) store.Indexers {
	if in == nil {
		return nil
	}
	out := make(store.Indexers, len(in))
	for name, f := range in {
		out[name] = store.IndexFunc(f)
	}
	return out
}

// indexer is chapter 1's indexer behind client-go's interface. Its methods
// are the same but for the two that carry the Indexers map type, and for
// client-go's tombstone, which our key function does not know: a caller
// deleting a [cache.DeletedFinalStateUnknown] (as client-go's own code does
// with a tombstone it was handed) must reach the object under its key.
type indexer struct {
	store.Indexer
	// owner is the informer whose cache this is: how InformerOf finds it
	// behind a wrapper's GetStore.
	owner *Informer
}

func (x indexer) Add(obj any) error    { return x.Indexer.Add(toOurTombstone(obj)) }
func (x indexer) Update(obj any) error { return x.Indexer.Update(toOurTombstone(obj)) }
func (x indexer) Delete(obj any) error { return x.Indexer.Delete(toOurTombstone(obj)) }
func (x indexer) Get(obj any) (any, bool, error) {
	return x.Indexer.Get(toOurTombstone(obj))
}

// GetIndexers returns the index functions by name.
func (x indexer) GetIndexers() cache.Indexers {
	ours := x.Indexer.GetIndexers()
	out := make(cache.Indexers, len(ours))
	for name, f := range ours {
		out[name] = cache.IndexFunc(f)
	}
	return out
}

// AddIndexers adds index functions, indexing what is already stored.
func (x indexer) AddIndexers(newIndexers cache.Indexers) error {
	return x.Indexer.AddIndexers(toOurIndexers(newIndexers))
}
