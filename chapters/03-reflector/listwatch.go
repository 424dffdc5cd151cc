package reflector

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// Lister lists a resource: one LIST request, or one page of it.
//
// Mirrors [k8s.io/client-go/tools/cache.Lister] (listwatch.go).
type Lister interface {
	List(options metav1.ListOptions) (runtime.Object, error)
}

// ListerWithContext is [Lister] with a context, so a stopping reflector can
// cancel a LIST in flight.
//
// Mirrors [k8s.io/client-go/tools/cache.ListerWithContext] (listwatch.go).
type ListerWithContext interface {
	ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error)
}

// Watcher opens a WATCH.
//
// Mirrors [k8s.io/client-go/tools/cache.Watcher] (listwatch.go).
type Watcher interface {
	Watch(options metav1.ListOptions) (watch.Interface, error)
}

// WatcherWithContext is [Watcher] with a context.
//
// Mirrors [k8s.io/client-go/tools/cache.WatcherWithContext] (listwatch.go).
type WatcherWithContext interface {
	WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error)
}

// ListerWatcher is what a Reflector needs from the API: list, then watch.
//
// Mirrors [k8s.io/client-go/tools/cache.ListerWatcher] (listwatch.go).
type ListerWatcher interface {
	Lister
	Watcher
}

// ListerWatcherWithContext is [ListerWatcher] with contexts; the Reflector
// uses this form internally.
//
// Mirrors [k8s.io/client-go/tools/cache.ListerWatcherWithContext] (listwatch.go).
type ListerWatcherWithContext interface {
	ListerWithContext
	WatcherWithContext
}

// ToListerWatcherWithContext returns lw itself if it already takes contexts,
// or an adapter that ignores them.
//
// Mirrors [k8s.io/client-go/tools/cache.ToListerWatcherWithContext] (listwatch.go).
func ToListerWatcherWithContext(lw ListerWatcher) ListerWatcherWithContext {
	if c, ok := lw.(ListerWatcherWithContext); ok {
		return c
	}
	return ignoreContext{lw}
}

type ignoreContext struct{ ListerWatcher }

func (i ignoreContext) ListWithContext(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
	return i.List(o)
}

func (i ignoreContext) WatchWithContext(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return i.Watch(o)
}

// ListFunc lists; see [ListWatch].
//
// Mirrors [k8s.io/client-go/tools/cache.ListFunc] (listwatch.go).
type ListFunc func(options metav1.ListOptions) (runtime.Object, error)

// ListWithContextFunc lists with a context; see [ListWatch].
//
// Mirrors [k8s.io/client-go/tools/cache.ListWithContextFunc] (listwatch.go).
type ListWithContextFunc func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error)

// WatchFunc watches; see [ListWatch].
//
// Mirrors [k8s.io/client-go/tools/cache.WatchFunc] (listwatch.go).
type WatchFunc func(options metav1.ListOptions) (watch.Interface, error)

// WatchFuncWithContext watches with a context; see [ListWatch].
//
// Mirrors [k8s.io/client-go/tools/cache.WatchFuncWithContext] (listwatch.go).
type WatchFuncWithContext func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error)

// ListWatch builds a [ListerWatcher] from functions. Set the context-taking
// function, the plain one, or both; each method prefers its own form and
// falls back to the other.
//
// Mirrors [k8s.io/client-go/tools/cache.ListWatch] (listwatch.go).
type ListWatch struct {
	ListFunc             ListFunc
	WatchFunc            WatchFunc
	ListWithContextFunc  ListWithContextFunc
	WatchFuncWithContext WatchFuncWithContext
	// DisableChunking is kept for source compatibility; like upstream's
	// reflector, ours does not read it (set Reflector.WatchListPageSize or
	// rely on the paging rules instead).
	DisableChunking bool
}

var _ ListerWatcherWithContext = &ListWatch{}

// List lists with the plain function, or with the context one and a
// background context.
func (lw *ListWatch) List(options metav1.ListOptions) (runtime.Object, error) {
	if lw.ListFunc != nil {
		return lw.ListFunc(options)
	}
	return lw.ListWithContextFunc(context.Background(), options)
}

// ListWithContext lists with the context function, or the plain one.
func (lw *ListWatch) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	if lw.ListWithContextFunc != nil {
		return lw.ListWithContextFunc(ctx, options)
	}
	return lw.ListFunc(options)
}

// Watch watches with the plain function, or with the context one and a
// background context.
func (lw *ListWatch) Watch(options metav1.ListOptions) (watch.Interface, error) {
	if lw.WatchFunc != nil {
		return lw.WatchFunc(options)
	}
	return lw.WatchFuncWithContext(context.Background(), options)
}

// WatchWithContext watches with the context function, or the plain one.
func (lw *ListWatch) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	if lw.WatchFuncWithContext != nil {
		return lw.WatchFuncWithContext(ctx, options)
	}
	return lw.WatchFunc(options)
}

// Getter is the one method of a REST client a ListWatch needs. A
// [rest.Interface] (any typed client's RESTClient()) is one.
//
// Mirrors [k8s.io/client-go/tools/cache.Getter] (listwatch.go).
type Getter interface {
	Get() *rest.Request
}

// NewListWatchFromClient lists and watches resource in namespace
// (metav1.NamespaceAll for every namespace) through c, restricted by
// fieldSelector.
//
// Mirrors [k8s.io/client-go/tools/cache.NewListWatchFromClient] (listwatch.go).
func NewListWatchFromClient(c Getter, resource, namespace string, fieldSelector fields.Selector) *ListWatch {
	return NewFilteredListWatchFromClient(c, resource, namespace, func(o *metav1.ListOptions) {
		o.FieldSelector = fieldSelector.String()
	})
}

// NewFilteredListWatchFromClient is [NewListWatchFromClient] with a function
// that may change every request's options (a label selector, say). It is
// applied to LISTs and WATCHes alike, which is what keeps the two consistent:
// a watch that selected more than its list would send events for objects the
// cache never listed.
//
// Mirrors [k8s.io/client-go/tools/cache.NewFilteredListWatchFromClient] (listwatch.go).
func NewFilteredListWatchFromClient(c Getter, resource, namespace string, optionsModifier func(*metav1.ListOptions)) *ListWatch {
	request := func(options metav1.ListOptions) *rest.Request {
		optionsModifier(&options)
		return c.Get().Namespace(namespace).Resource(resource).VersionedParams(&options, metav1.ParameterCodec)
	}
	return &ListWatch{
		ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			return request(options).Do(ctx).Get()
		},
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			options.Watch = true
			return request(options).Watch(ctx)
		},
	}
}
