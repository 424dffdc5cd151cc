package dropin

import (
	"context"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamiclister"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
)

// FactoryScope is what a client-go informer factory narrows every watch
// to: its namespace (informers.WithNamespace; "" is every namespace) and
// its list-options tweak (informers.WithTweakListOptions, typically a label
// or field selector). Write it once and give it to both the factory
// ([FactoryScope.Options]) and the informers built in its InformerFor
// ([NewInformerFunc], [NewListWatch]): InformerFor's newFunc is given only
// the client and the resync period, so a ListerWatcher written by hand
// there that forgets the scope watches more than the factory would, and
// nothing says so.
//
// Ours: client-go keeps the two in the factory's unexported fields and
// hands them to each generated informer (defaultInformer).
type FactoryScope struct {
	// Namespace is the one namespace watched; "" watches all
	// (metav1.NamespaceAll).
	Namespace string
	// TweakListOptions, if set, edits the options of every LIST and WATCH.
	TweakListOptions func(*metav1.ListOptions)
	// InformerName, if set, names the factory's informers in their metrics
	// (informers.WithInformerName): each informer's Identifier is
	// InformerName.WithResource(its GVR), reserved for the first informer of
	// that resource, as client-go's generated informers make it. Make it
	// once with cache.NewInformerName.
	InformerName *cache.InformerName
}

// Options are the factory options that give a factory this scope, for
// [k8s.io/client-go/informers.NewSharedInformerFactoryWithOptions]:
// informers.WithNamespace and, if set, informers.WithTweakListOptions and
// informers.WithInformerName.
//
// Ours.
func (s FactoryScope) Options() []informers.SharedInformerOption {
	opts := []informers.SharedInformerOption{informers.WithNamespace(s.Namespace)}
	if s.TweakListOptions != nil {
		opts = append(opts, informers.WithTweakListOptions(s.TweakListOptions))
	}
	if s.InformerName != nil {
		opts = append(opts, informers.WithInformerName(s.InformerName))
	}
	return opts
}

// tweak applies the scope's tweak to a copy of opts.
func (s FactoryScope) tweak(opts metav1.ListOptions) metav1.ListOptions {
	if s.TweakListOptions != nil {
		s.TweakListOptions(&opts)
	}
	return opts
}

// ListWatchClient is a typed client of one resource in one namespace, as
// an informer needs it: client-go's generated clients
// (client.CoreV1().Pods(ns), and every other, through gentype) and the
// dynamic client's client.Resource(gvr).Namespace(ns) all have these two
// methods.
//
// Ours: client-go's generated informers call the typed client directly.
type ListWatchClient[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// NewListWatch returns the ListerWatcher a client-go informer factory
// builds for a resource within scope: List and Watch of
// resource(scope.Namespace), each with scope.TweakListOptions applied to
// its options first, marked by cache.ToListWatcherWithWatchListSemantics
// with client so that a client that cannot stream the initial state (the
// fake clientsets) is listed instead. client is the clientset resource was
// taken from (InformerFor's newFunc is given it).
//
// Mirrors the ListerWatcher of the generated NewTyped<Type>InformerWithOptions
// (k8s.io/client-go/informers/<group>/<version>/<type>.go) and of
// dynamicinformer.NewFilteredDynamicInformer (dynamic/dynamicinformer/informer.go).
func NewListWatch[L runtime.Object](scope FactoryScope, client any, resource ListWatchClient[L]) cache.ListerWatcher {
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return resource.List(ctx, scope.tweak(opts))
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return resource.Watch(ctx, scope.tweak(opts))
		},
	}, client)
}

// NewInformerFunc returns the newFunc to give a typed factory's InformerFor
// so that it builds our informer for exampleObject's type, within scope (the
// one the factory was made with), as its generated informer would: the
// namespace index, the factory's resync period for the type, the
// ListerWatcher of [NewListWatch] on resource(client, scope.Namespace), and
// the Identifier scope.InformerName.WithResource(gvr), which names the
// informer's metrics (reserved only with an InformerName) and, by its
// resource, its spans' informer.name. gvr is exampleObject's kind in
// client-go's scheme (k8s.io/client-go/kubernetes/scheme) with the resource
// named as the generated informers name it (see resourceFor).
//
//	scope := dropin.FactoryScope{Namespace: "prod", TweakListOptions: selectApp}
//	factory := informers.NewSharedInformerFactoryWithOptions(client, resync, scope.Options()...)
//	factory.InformerFor(&corev1.Pod{}, dropin.NewInformerFunc(scope, &corev1.Pod{},
//		func(c kubernetes.Interface, ns string) dropin.ListWatchClient[*corev1.PodList] { return c.CoreV1().Pods(ns) }))
//
// Mirrors the generated defaultInformer (k8s.io/client-go/informers/<group>/<version>/<type>.go).
func NewInformerFunc[L runtime.Object](scope FactoryScope, exampleObject runtime.Object, resource func(client kubernetes.Interface, namespace string) ListWatchClient[L]) func(kubernetes.Interface, time.Duration) cache.SharedIndexInformer {
	gvr := resourceFor(exampleObject)
	return func(client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		lw := NewListWatch(scope, client, resource(client, scope.Namespace))
		return NewSharedIndexInformerWithOptions(lw, exampleObject, cache.SharedIndexInformerOptions{
			ResyncPeriod: resync,
			Indexers:     cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
			Identifier:   scope.InformerName.WithResource(gvr),
		})
	}
}

// resourceFor is the GVR client-go's generated informer of obj's type
// writes in its NewTyped<Type>InformerWithOptions: obj's kind in client-go's
// scheme, with the resource the kind in lower case and an "s". That is not
// always the API's resource: client-go v0.37.2's generator writes
// "ingresss", "endpointss", "networkpolicys" (TestResourceForMatchesTheGeneratedInformers
// reads every generated informer and holds ours to it), and the metrics of
// client-go's factory carry those names, so ours carry them too. Empty for
// a type the scheme does not know.
func resourceFor(obj runtime.Object) schema.GroupVersionResource {
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return schema.GroupVersionResource{}
	}
	return gvks[0].GroupVersion().WithResource(strings.ToLower(gvks[0].Kind) + "s")
}

// NewDynamicInformer is our informer for one resource of the dynamic
// client, within scope, as client-go's dynamic factory would make it, for
// the controllers (CRDs, typically) written against its
// informers.GenericInformer. The dynamic factory has no InformerFor, so it
// cannot be told to build ours: make ours with this instead of asking the
// factory's ForResource, and start it with Run (the factory starts only
// its own).
//
// Mirrors [k8s.io/client-go/dynamic/dynamicinformer.NewFilteredDynamicInformer]
// (dynamic/dynamicinformer/informer.go); the factory's ForResource adds the
// namespace index, as indexers may.
func NewDynamicInformer(client dynamic.Interface, gvr schema.GroupVersionResource, scope FactoryScope, resyncPeriod time.Duration, indexers cache.Indexers) informers.GenericInformer {
	lw := NewListWatch(scope, client, client.Resource(gvr).Namespace(scope.Namespace))
	inf := NewSharedIndexInformerWithOptions(lw, &unstructured.Unstructured{}, cache.SharedIndexInformerOptions{
		ResyncPeriod: resyncPeriod, Indexers: indexers, ObjectDescription: gvr.String(),
	})
	return genericInformer{inf, gvr}
}

// genericInformer is NewDynamicInformer's answer, as dynamicinformer's
// unexported dynamicInformer: the informer and a lister of unstructured
// objects over its cache.
type genericInformer struct {
	inf cache.SharedIndexInformer
	gvr schema.GroupVersionResource
}

func (g genericInformer) Informer() cache.SharedIndexInformer { return g.inf }
func (g genericInformer) Lister() cache.GenericLister {
	return dynamiclister.NewRuntimeObjectShim(dynamiclister.New(g.inf.GetIndexer(), g.gvr))
}

// InformerOf finds our informer behind inf: inf itself, or what a wrapper
// forwards to, such as the cache.TypedSharedIndexInformer that client-go
// 1.37's generated accessors return (factory.Core().V1().Pods().Informer()
// is one, so a type assertion to *Informer fails on it). It is found
// through GetStore, which client-go's wrapper forwards (it embeds the
// informer), as would any wrapper that hands out our cache; false if inf
// is not ours.
//
// Ours: client-go's wrapper has no Unwrap.
func InformerOf(inf cache.SharedInformer) (*Informer, bool) {
	if i, ok := inf.(*Informer); ok {
		return i, true
	}
	if inf == nil {
		return nil, false
	}
	if x, ok := inf.GetStore().(indexer); ok && x.owner != nil {
		return x.owner, true
	}
	return nil, false
}
