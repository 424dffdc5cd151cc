package processor

import (
	"fmt"
	"strings"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
)

// The typed informer of client-go 1.37: the same informer, with handlers
// and index functions written for one object type. It is a thin wrapper:
// every typed call becomes the untyped one, and the typed handler adapter
// does the type assertions a hand-written handler would.

// Object is what a typed informer's objects must be: comparable (so a
// missing object, a nil pointer, can be told from a present one) and named.
//
// Mirrors [k8s.io/client-go/tools/cache.Object] (controller.go).
type Object interface {
	comparable
	GetName() string
	GetNamespace() string
}

// DeletedObject is what a typed OnDelete receives: the object, and, when
// the informer missed its final state (a relist found it gone), the
// tombstone. OptionalObj may then be stale or the zero T; the key is
// always known (GetKey, GetObjectName).
//
// Mirrors [k8s.io/client-go/tools/cache.DeletedObject] (controller.go).
type DeletedObject[T Object] struct {
	// OptionalObj is the deleted object: its last known state, or the
	// zero T when the informer never had one.
	OptionalObj T
	// FinalStateUnknown is set when the delete was found by a relist.
	FinalStateUnknown *deltafifo.DeletedFinalStateUnknown
}

// GetObjectName is the deleted object's namespace and name, from the
// tombstone's key when there is one (a key with more than one "/" keeps
// the rest in the name), else from the object.
func (d DeletedObject[T]) GetObjectName() store.ObjectName {
	if d.FinalStateUnknown != nil {
		ns, name, found := strings.Cut(d.FinalStateUnknown.Key, "/")
		if !found {
			return store.ObjectName{Name: ns}
		}
		return store.ObjectName{Namespace: ns, Name: name}
	}
	var zero T
	if d.OptionalObj == zero {
		return store.ObjectName{}
	}
	return store.ObjectName{Namespace: d.OptionalObj.GetNamespace(), Name: d.OptionalObj.GetName()}
}

// GetName is the name without the namespace.
func (d DeletedObject[T]) GetName() string { return d.GetObjectName().Name }

// GetNamespace is the namespace, or "".
func (d DeletedObject[T]) GetNamespace() string { return d.GetObjectName().Namespace }

// GetKey is the key the object was cached under.
func (d DeletedObject[T]) GetKey() string {
	if d.FinalStateUnknown != nil {
		return d.FinalStateUnknown.Key
	}
	return d.GetObjectName().String()
}

// TypedResourceEventHandler is ResourceEventHandler for objects of type T.
//
// Mirrors [k8s.io/client-go/tools/cache.TypedResourceEventHandler] (controller.go).
type TypedResourceEventHandler[T Object] interface {
	OnAdd(obj T, isInInitialList bool)
	OnUpdate(oldObj, newObj T)
	OnDelete(obj DeletedObject[T])
}

// TypedResourceEventHandlerFuncs is ResourceEventHandlerFuncs for T.
//
// Mirrors [k8s.io/client-go/tools/cache.TypedResourceEventHandlerFuncs] (controller.go).
type TypedResourceEventHandlerFuncs[T Object] struct {
	AddFunc    func(obj T)
	UpdateFunc func(oldObj, newObj T)
	DeleteFunc func(obj DeletedObject[T])
}

// OnAdd calls AddFunc if set.
func (r TypedResourceEventHandlerFuncs[T]) OnAdd(obj T, _ bool) {
	if r.AddFunc != nil {
		r.AddFunc(obj)
	}
}

// OnUpdate calls UpdateFunc if set.
func (r TypedResourceEventHandlerFuncs[T]) OnUpdate(oldObj, newObj T) {
	if r.UpdateFunc != nil {
		r.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc if set.
func (r TypedResourceEventHandlerFuncs[T]) OnDelete(obj DeletedObject[T]) {
	if r.DeleteFunc != nil {
		r.DeleteFunc(obj)
	}
}

// TypedResourceEventHandlerDetailedFuncs is
// ResourceEventHandlerDetailedFuncs for T.
//
// Mirrors [k8s.io/client-go/tools/cache.TypedResourceEventHandlerDetailedFuncs] (controller.go).
type TypedResourceEventHandlerDetailedFuncs[T Object] struct {
	AddFunc    func(obj T, isInInitialList bool)
	UpdateFunc func(oldObj, newObj T)
	DeleteFunc func(obj DeletedObject[T])
}

// OnAdd calls AddFunc if set.
func (r TypedResourceEventHandlerDetailedFuncs[T]) OnAdd(obj T, isInInitialList bool) {
	if r.AddFunc != nil {
		r.AddFunc(obj, isInInitialList)
	}
}

// OnUpdate calls UpdateFunc if set.
func (r TypedResourceEventHandlerDetailedFuncs[T]) OnUpdate(oldObj, newObj T) {
	if r.UpdateFunc != nil {
		r.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc if set.
func (r TypedResourceEventHandlerDetailedFuncs[T]) OnDelete(obj DeletedObject[T]) {
	if r.DeleteFunc != nil {
		r.DeleteFunc(obj)
	}
}

// TypedFilteringResourceEventHandler is FilteringResourceEventHandler for
// T: an update that moves an object into the filter is an add, out of it a
// delete.
//
// Mirrors [k8s.io/client-go/tools/cache.TypedFilteringResourceEventHandler] (controller.go).
// A delete whose object is unknown (a tombstone without one) is passed on
// without asking FilterFunc, where upstream asks it with the zero T, a nil
// pointer most filters would dereference.
type TypedFilteringResourceEventHandler[T Object] struct {
	FilterFunc func(obj T) bool
	Handler    TypedResourceEventHandler[T]
}

// OnAdd passes obj on if it passes the filter.
func (r TypedFilteringResourceEventHandler[T]) OnAdd(obj T, isInInitialList bool) {
	if r.FilterFunc(obj) {
		r.Handler.OnAdd(obj, isInInitialList)
	}
}

// OnUpdate passes on an update, an add or a delete, by which of the two
// states pass the filter.
func (r TypedFilteringResourceEventHandler[T]) OnUpdate(oldObj, newObj T) {
	switch newer, older := r.FilterFunc(newObj), r.FilterFunc(oldObj); {
	case newer && older:
		r.Handler.OnUpdate(oldObj, newObj)
	case newer:
		r.Handler.OnAdd(newObj, false)
	case older:
		r.Handler.OnDelete(DeletedObject[T]{OptionalObj: oldObj})
	}
}

// OnDelete passes obj on if its object passes the filter, or is unknown.
func (r TypedFilteringResourceEventHandler[T]) OnDelete(obj DeletedObject[T]) {
	var zero T
	if obj.OptionalObj == zero || r.FilterFunc(obj.OptionalObj) {
		r.Handler.OnDelete(obj)
	}
}

// TypedSharedIndexInformer is a SharedIndexInformer with typed variants of
// its handler and index methods.
//
// Mirrors [k8s.io/client-go/tools/cache.TypedSharedIndexInformer] (shared_informer.go).
type TypedSharedIndexInformer[T Object] interface {
	SharedIndexInformer
	// AddTypedEventHandler is AddEventHandler (no options) or
	// AddEventHandlerWithOptions (one); more than one is an error.
	AddTypedEventHandler(handler TypedResourceEventHandler[T], options ...HandlerOptions) (ResourceEventHandlerRegistration, error)
	AddTypedIndexers(indexers store.TypedIndexers[T]) error
	GetTypedIndexer() store.TypedIndexer[T]
}

// NewTypedSharedIndexInformer wraps informer, whose objects must all be Ts.
//
// Mirrors [k8s.io/client-go/tools/cache.NewTypedSharedIndexInformer] (shared_informer.go).
func NewTypedSharedIndexInformer[T Object](informer SharedIndexInformer) TypedSharedIndexInformer[T] {
	return typedInformer[T]{informer}
}

type typedInformer[T Object] struct{ SharedIndexInformer }

func (s typedInformer[T]) AddTypedEventHandler(handler TypedResourceEventHandler[T], options ...HandlerOptions) (ResourceEventHandlerRegistration, error) {
	if len(options) > 1 {
		return nil, fmt.Errorf("at most one HandlerOptions may be passed, got %d", len(options))
	}
	var o HandlerOptions
	if len(options) == 1 {
		o = options[0]
	}
	return s.AddEventHandlerWithOptions(typedHandler[T]{handler}, o)
}

func (s typedInformer[T]) AddTypedIndexers(indexers store.TypedIndexers[T]) error {
	return s.AddIndexers(store.TypedIndexersToIndexers(indexers))
}

func (s typedInformer[T]) GetTypedIndexer() store.TypedIndexer[T] {
	return store.NewTypedIndexer[T](s.GetIndexer())
}

// typedHandler is the untyped handler chapter 5 calls; it asserts each
// object to T as the user's own code would have. An object that is not a T
// panics, as upstream's does: it means the informer was built for another
// type, a programming error the first event shows.
type typedHandler[T Object] struct{ h TypedResourceEventHandler[T] }

func (t typedHandler[T]) OnAdd(obj any, isInInitialList bool) { t.h.OnAdd(obj.(T), isInInitialList) }
func (t typedHandler[T]) OnUpdate(oldObj, newObj any)         { t.h.OnUpdate(oldObj.(T), newObj.(T)) }
func (t typedHandler[T]) OnDelete(obj any) {
	tomb, ok := obj.(deltafifo.DeletedFinalStateUnknown)
	if !ok {
		t.h.OnDelete(DeletedObject[T]{OptionalObj: obj.(T)})
		return
	}
	d := DeletedObject[T]{FinalStateUnknown: &tomb}
	if tomb.Obj != nil {
		d.OptionalObj = tomb.Obj.(T)
	}
	t.h.OnDelete(d)
}

// ListenerName names the user's handler in spans, not this adapter.
func (t typedHandler[T]) ListenerName() string { return fmt.Sprintf("%T", t.h) }
