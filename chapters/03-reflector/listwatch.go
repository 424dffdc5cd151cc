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
	request := func(options metav1.ListOptions, isWatch bool) *rest.Request {
		// Watch is set before the modifier runs, as upstream does, so a
		// modifier sees the request it is shaping.
		options.Watch = isWatch
		optionsModifier(&options)
		return c.Get().Namespace(namespace).Resource(resource).VersionedParams(&options, metav1.ParameterCodec)
	}
	// All four functions, as upstream fills them: a caller that reaches for
	// the plain List or Watch (old code, or a wrapper that only knows
	// those) must find them set, not nil.
	return &ListWatch{
		ListFunc: func(options metav1.ListOptions) (runtime.Object, error) {
			return request(options, false).Do(context.Background()).Get()
		},
		WatchFunc: func(options metav1.ListOptions) (watch.Interface, error) {
			return request(options, true).Watch(context.Background())
		},
		ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			return request(options, false).Do(ctx).Get()
		},
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			return request(options, true).Watch(ctx)
		},
	}
}

// DoesClientNotSupportWatchListSemantics reports whether client says it
// cannot stream the initial state: it has a method
// IsWatchListSemanticsUnSupported() that returns true. Anything else,
// including a client that knows nothing of watch-list, is taken to support
// it; the reflector still falls back to a LIST if the server refuses.
//
// Why a client would say so: a fake clientset (k8s.io/client-go/kubernetes/fake)
// answers a WATCH with no initial events and no bookmark, so a reflector
// streaming from it would wait for a bookmark that never comes. The opt-out
// lets it LIST instead.
//
// Mirrors [k8s.io/client-go/util/watchlist.DoesClientNotSupportWatchListSemantics] (watch_list.go).
func DoesClientNotSupportWatchListSemantics(client any) bool {
	c, ok := client.(interface{ IsWatchListSemanticsUnSupported() bool })
	return ok && c.IsWatchListSemanticsUnSupported()
}

// ToListWatcherWithWatchListSemantics returns lw as a ListerWatcher that
// carries client's answer to [DoesClientNotSupportWatchListSemantics], so a
// reflector built on lw streams or LISTs first as client allows. client-go's
// generated informers wrap their ListWatch this way, passing the clientset.
//
// Mirrors [k8s.io/client-go/tools/cache.ToListWatcherWithWatchListSemantics] (listwatch.go).
func ToListWatcherWithWatchListSemantics(lw *ListWatch, client any) ListerWatcher {
	return &listWatchWithSemantics{ListWatch: lw, unsupported: DoesClientNotSupportWatchListSemantics(client)}
}

// listWatchWithSemantics is a ListWatch that answers
// IsWatchListSemanticsUnSupported.
type listWatchWithSemantics struct {
	*ListWatch
	unsupported bool
}

func (lw *listWatchWithSemantics) IsWatchListSemanticsUnSupported() bool { return lw.unsupported }
