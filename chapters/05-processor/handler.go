package processor

import "go.opentelemetry.io/otel/trace"

// ResourceEventHandler is told of changes to the informer's objects. Its
// methods are called from one goroutine per handler, in order, never at the
// same time; they must not block for long (the handler's notifications pile
// up in its buffer meanwhile) and must not modify the objects they receive.
//
//   - OnAdd: an object appeared (isInInitialList: it was in the first LIST);
//   - OnUpdate: an object changed, or a resync or relist re-delivered it
//     unchanged (then old and new have the same resourceVersion);
//   - OnDelete: an object went away; obj is its last state, or a
//     deltafifo.DeletedFinalStateUnknown when the deletion was only
//     discovered by a relist.
//
// Mirrors [k8s.io/client-go/tools/cache.ResourceEventHandler] (controller.go).
type ResourceEventHandler interface {
	OnAdd(obj any, isInInitialList bool)
	OnUpdate(oldObj, newObj any)
	OnDelete(obj any)
}

// CallSpanHandler is a [ResourceEventHandler] that wants to know, for each
// of its calls, the span of that call: the informer then calls EnterCall on
// the handler's goroutine just before OnAdd, OnUpdate or OnDelete, and the
// function it returns right after the call (a panicking call included).
// client-go's handler methods carry no context, so this is how what a
// handler starts (a traced workqueue's Add, package dropin) can find the
// call it was made in; the informer itself needs nothing of it and a
// handler that does not implement it costs nothing.
//
// It is called for every call made while tracing is on, with:
//
//   - the span context of the call's OnAdd, OnUpdate or OnDelete span,
//     for a call whose object is traced;
//   - the invalid span context, for a call whose change is left out of
//     the traces: the informer's TraceFilter left its object out, or the
//     sampler dropped the change's root (chapter 4's queues drop both
//     alike, before this chapter sees them). What the call starts should
//     stay out too, so that a sampled trace is whole or absent: an Add
//     made in a sampled-out call that started a trace of its own would be
//     sampled again, and one in a hundred, at 1%, would begin at the Add.
//
// It is not called with tracing off. A handler that registers the call
// somewhere pays that on every event, sampled or not, so it should do so
// only when something will look (dropin's adapter: only while a traced
// workqueue is alive).
//
// Ours: client-go's handlers are told nothing of traces.
type CallSpanHandler interface {
	ResourceEventHandler
	EnterCall(sc trace.SpanContext) (exit func())
}

// ResourceEventHandlerFuncs adapts functions to a ResourceEventHandler; a nil
// function ignores its event.
//
// Mirrors [k8s.io/client-go/tools/cache.ResourceEventHandlerFuncs] (controller.go),
// whose AddFunc does not take isInInitialList.
type ResourceEventHandlerFuncs struct {
	AddFunc    func(obj any)
	UpdateFunc func(oldObj, newObj any)
	DeleteFunc func(obj any)
}

// OnAdd calls AddFunc.
func (r ResourceEventHandlerFuncs) OnAdd(obj any, _ bool) {
	if r.AddFunc != nil {
		r.AddFunc(obj)
	}
}

// OnUpdate calls UpdateFunc.
func (r ResourceEventHandlerFuncs) OnUpdate(oldObj, newObj any) {
	if r.UpdateFunc != nil {
		r.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc.
func (r ResourceEventHandlerFuncs) OnDelete(obj any) {
	if r.DeleteFunc != nil {
		r.DeleteFunc(obj)
	}
}

// ResourceEventHandlerDetailedFuncs is ResourceEventHandlerFuncs whose
// AddFunc also receives isInInitialList.
//
// Mirrors [k8s.io/client-go/tools/cache.ResourceEventHandlerDetailedFuncs] (controller.go).
type ResourceEventHandlerDetailedFuncs struct {
	AddFunc    func(obj any, isInInitialList bool)
	UpdateFunc func(oldObj, newObj any)
	DeleteFunc func(obj any)
}

// OnAdd calls AddFunc.
func (r ResourceEventHandlerDetailedFuncs) OnAdd(obj any, isInInitialList bool) {
	if r.AddFunc != nil {
		r.AddFunc(obj, isInInitialList)
	}
}

// OnUpdate calls UpdateFunc.
func (r ResourceEventHandlerDetailedFuncs) OnUpdate(oldObj, newObj any) {
	if r.UpdateFunc != nil {
		r.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc.
func (r ResourceEventHandlerDetailedFuncs) OnDelete(obj any) {
	if r.DeleteFunc != nil {
		r.DeleteFunc(obj)
	}
}

// FilteringResourceEventHandler passes on only objects FilterFunc accepts,
// and turns an update that crosses the filter into what the handler should
// see: an object that starts passing is an add, one that stops passing is a
// delete of its old state (the last one the handler was told about).
//
// Mirrors [k8s.io/client-go/tools/cache.FilteringResourceEventHandler] (controller.go).
type FilteringResourceEventHandler struct {
	FilterFunc func(obj any) bool
	Handler    ResourceEventHandler
}

// OnAdd passes obj on if it passes the filter.
func (r FilteringResourceEventHandler) OnAdd(obj any, isInInitialList bool) {
	if r.FilterFunc(obj) {
		r.Handler.OnAdd(obj, isInInitialList)
	}
}

// OnUpdate passes the update on as an update, an add or a delete.
func (r FilteringResourceEventHandler) OnUpdate(oldObj, newObj any) {
	was, is := r.FilterFunc(oldObj), r.FilterFunc(newObj)
	switch {
	case was && is:
		r.Handler.OnUpdate(oldObj, newObj)
	case is:
		r.Handler.OnAdd(newObj, false)
	case was:
		r.Handler.OnDelete(oldObj)
	}
}

// OnDelete passes obj on if it passes the filter.
func (r FilteringResourceEventHandler) OnDelete(obj any) {
	if r.FilterFunc(obj) {
		r.Handler.OnDelete(obj)
	}
}
