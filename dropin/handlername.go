package dropin

import (
	"reflect"
	"runtime"
	"strings"

	"k8s.io/client-go/tools/cache"
)

// NamedHandler returns h under the name name: the name its listener has
// in this package's informers' spans (informer.listener, followed by
// "#<n>", the handler's place among the informer's handlers) instead of
// the one client-go's naming gives it (its type, or for
// cache.ResourceEventHandlerFuncs the functions it holds). Give it where
// that name says too little: two handlers of one type, a closure.
//
// The handler returned calls h and nothing else, so it can be given to
// any informer; client-go's names it by this package's wrapper type, as
// its naming has no room for a name (cache.HandlerOptions has Logger and
// ResyncPeriod only).
//
// Ours: client-go has no way to name a handler.
func NamedHandler(name string, h cache.ResourceEventHandler) cache.ResourceEventHandler {
	return namedHandler{ResourceEventHandler: h, name: name}
}

type namedHandler struct {
	cache.ResourceEventHandler
	name string
}

// controllerRuntimeEventHandler is the import path and type name (before
// its type arguments) of the handler controller-runtime's source.Kind
// adds to an informer for every For, Owns and Watches of a controller
// (pkg/internal/source/event_handler.go, EventHandler, made by
// NewEventHandler in kind.go's Start). It wraps the handler.EventHandler
// that tells them apart in its unexported field "handler".
const (
	controllerRuntimeSourcePkg    = "sigs.k8s.io/controller-runtime/pkg/internal/source"
	controllerRuntimeEventHandler = "EventHandler["
	controllerRuntimeWrappedField = "handler"
)

// nameForControllerRuntime names a controller-runtime source.EventHandler
// by the handler.EventHandler it wraps, which says what the watch is for;
// "" for any other handler. Every such handler is otherwise
// "sigs.k8s.io/controller-runtime/pkg/internal/source.EventHandler[…]", whatever
// the watch. The name is the wrapped handler's package path and type
// name without type arguments, then in parentheses the functions it
// holds, when it holds some:
//
//   - For: "sigs.k8s.io/controller-runtime/pkg/handler.TypedEnqueueRequestForObject";
//   - Owns: "sigs.k8s.io/controller-runtime/pkg/handler.WithLowPriorityWhenUnchanged".
//     handler.EnqueueRequestForOwner returns its handler wrapped in
//     WithLowPriorityWhenUnchanged, a TypedFuncs of the handler's method
//     values, and the handler a method value is bound to cannot be read
//     by reflection, so the name says what wrapped it (and so does
//     any handler wrapped in WithLowPriorityWhenUnchanged);
//   - Watches with handler.EnqueueRequestsFromMapFunc:
//     "….enqueueRequestsFromMapFunc(<the map function>)", with
//     handler.Funcs "….TypedFuncs(<its functions>)": a struct's non-nil
//     func fields, named as for cache.ResourceEventHandlerFuncs (their
//     common qualifier, or all joined with "+"), but one function whole;
//   - a user's own handler type: its package path and name.
//
// controller-runtime exports neither the wrapper's field nor the
// wrapped handlers' types, so this reads them by reflection, by name
// (reading an unexported field's type and a func's address is allowed,
// calling through it is not, and nothing here does). Checked against
// controller-runtime v0.25.2 by examples/controller-runtime's
// TestControllerRuntimeHandlersAreToldApart; a controller-runtime that
// renames them gets the generic name back, never a panic.
//
// Ours: client-go names them all by the wrapper's type.
func nameForControllerRuntime(h cache.ResourceEventHandler) string {
	v := reflect.ValueOf(h)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return ""
	}
	v = v.Elem()
	t := v.Type()
	if t.Kind() != reflect.Struct || t.PkgPath() != controllerRuntimeSourcePkg || !strings.HasPrefix(t.Name(), controllerRuntimeEventHandler) {
		return ""
	}
	inner := v.FieldByName(controllerRuntimeWrappedField)
	if !inner.IsValid() || inner.Kind() != reflect.Interface || inner.IsNil() {
		return ""
	}
	inner = inner.Elem()
	if inner.Kind() == reflect.Pointer {
		if inner.IsNil() {
			return typeNameOf(inner.Type().Elem())
		}
		inner = inner.Elem()
	}
	name := typeNameOf(inner.Type())
	if inner.Kind() != reflect.Struct {
		return name
	}
	var funcs []string
	for i := range inner.NumField() {
		f := inner.Field(i)
		if f.Kind() != reflect.Func || f.IsNil() {
			continue
		}
		if fn := runtime.FuncForPC(f.Pointer()); fn != nil {
			funcs = append(funcs, fn.Name())
		}
	}
	if len(funcs) > 0 && boundToAnInterface(funcs) {
		// handler.WithLowPriorityWhenUnchanged(h) is a TypedFuncs of h's
		// method values; which h they are bound to is out of reflection's
		// reach, so the name says what made them.
		return inner.Type().PkgPath() + "." + controllerRuntimeLowPriority
	}
	if len(funcs) > 0 {
		return name + "(" + commonQualifier(funcs) + ")"
	}
	return name
}

// controllerRuntimeLowPriority is the controller-runtime handler whose
// funcs are all bound to a handler.TypedEventHandler: in v0.25.2 what
// handler.EnqueueRequestForOwner returns (enqueue_owner.go), so what every
// Owns adds.
const controllerRuntimeLowPriority = "WithLowPriorityWhenUnchanged"

// boundToAnInterface: every name is a method value of an interface type,
// "pkg.TypedEventHandler[...].Create-fm".
func boundToAnInterface(names []string) bool {
	for _, n := range names {
		if !strings.HasSuffix(n, "-fm") || !strings.Contains(n, ".TypedEventHandler[") {
			return false
		}
	}
	return true
}

// typeNameOf is t's package path and name, without type arguments.
func typeNameOf(t reflect.Type) string {
	name, _, _ := strings.Cut(t.Name(), "[")
	if name == "" {
		return t.String()
	}
	if pkg := t.PkgPath(); pkg != "" {
		return pkg + "." + name
	}
	return name
}

// commonQualifier is namesOfFuncs for names already read (qualifierOf),
// but one function is named whole (a map function's qualifier alone, its
// package, would say little).
func commonQualifier(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return qualifierOf(names)
}
