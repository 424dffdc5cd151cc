package factory

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	lister "github.com/informer-anatomy/informer-anatomy/chapters/02-lister"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
)

// SharedInformerFactory hands out one shared informer per type: every caller
// asking for pods gets the same informer, so a process with ten controllers
// watching pods opens one watch and keeps one cache.
//
// Mirrors [k8s.io/client-go/informers.SharedInformerFactory] (informers/factory.go),
// without the generated group list.
type SharedInformerFactory interface {
	// Start runs every informer created so far that is not yet running; it
	// is safe to call again after creating more.
	Start(stopCh <-chan struct{})
	// StartWithContext is Start until ctx is done; the informers run with
	// ctx, so they log through its logger.
	StartWithContext(ctx context.Context)
	// WaitForCacheSync waits for every started informer to sync (or stopCh)
	// and reports each one's state. It waits on each informer's
	// HasSyncedChecker().Done() channel, never polls.
	WaitForCacheSync(stopCh <-chan struct{}) map[reflect.Type]bool
	// WaitForCacheSyncWithContext is WaitForCacheSync until ctx is done, with
	// the reason it stopped early. An informer's cache can sync before its
	// handlers have seen it all: wait for their registrations' checkers too
	// (processor.WaitFor) where that matters.
	WaitForCacheSyncWithContext(ctx context.Context) SyncResult
	// Shutdown marks the factory as shutting down (Start then does nothing),
	// waits until every informer goroutine has returned, and releases the
	// informer name given with WithInformerName. Stop them first, by closing
	// the channel given to Start.
	Shutdown()
	// InformerName is the name given with WithInformerName, or nil.
	InformerName() *processor.InformerName
	// InformerFor returns the informer for obj's type, creating it with
	// newFunc the first time: the first caller's newFunc wins. newFunc runs
	// under the factory's lock and must not call back into the factory.
	InformerFor(obj runtime.Object, newFunc NewInformerFunc) processor.SharedIndexInformer
	// ForResource returns an informer for any resource: the typed one for
	// resources the factory knows, an unstructured one otherwise.
	ForResource(gvr schema.GroupVersionResource) (GenericInformer, error)

	Core() CoreGroup
	Apps() AppsGroup
}

// NewInformerFunc creates an informer for InformerFor.
//
// Mirrors [k8s.io/client-go/informers/internalinterfaces.NewInformerFunc].
type NewInformerFunc func(client *Client, resyncPeriod time.Duration) processor.SharedIndexInformer

// TweakListOptionsFunc changes the options of every LIST and WATCH an
// informer sends (a label selector, say).
//
// Mirrors [k8s.io/client-go/informers/internalinterfaces.TweakListOptionsFunc].
type TweakListOptionsFunc func(*metav1.ListOptions)

// SharedInformerOption configures a factory.
//
// Mirrors [k8s.io/client-go/informers.SharedInformerOption].
type SharedInformerOption func(*sharedInformerFactory)

// WithNamespace limits every informer to one namespace.
func WithNamespace(namespace string) SharedInformerOption {
	return func(f *sharedInformerFactory) { f.namespace = namespace }
}

// WithTweakListOptions sets a function applied to every LIST and WATCH.
func WithTweakListOptions(tweak TweakListOptionsFunc) SharedInformerOption {
	return func(f *sharedInformerFactory) { f.tweak = tweak }
}

// WithCustomResyncConfig sets per-type resync periods, keyed by an example
// object of each type.
func WithCustomResyncConfig(resync map[metav1.Object]time.Duration) SharedInformerOption {
	return func(f *sharedInformerFactory) {
		for obj, d := range resync {
			f.customResync[reflect.TypeOf(obj)] = d
		}
	}
}

// WithTransform sets a transform on every informer the factory creates.
func WithTransform(transform deltafifo.TransformFunc) SharedInformerOption {
	return func(f *sharedInformerFactory) { f.transform = transform }
}

// WithInformerName gives every informer the factory creates an identifier
// of this name and its resource (SharedIndexInformerOptions.Identifier);
// Shutdown releases the name. Make the name with processor.NewInformerName
// at start-up, once per component.
//
// Mirrors [k8s.io/client-go/informers.WithInformerName] (informers/factory.go).
func WithInformerName(name *processor.InformerName) SharedInformerOption {
	return func(f *sharedInformerFactory) { f.informerName = name }
}

// WithTracerProvider traces every informer the factory creates. Not in
// client-go.
func WithTracerProvider(tp trace.TracerProvider) SharedInformerOption {
	return func(f *sharedInformerFactory) { f.tp = tp }
}

// NewSharedInformerFactory returns a factory for all namespaces.
//
// Mirrors [k8s.io/client-go/informers.NewSharedInformerFactory].
func NewSharedInformerFactory(client *Client, defaultResync time.Duration) SharedInformerFactory {
	return NewSharedInformerFactoryWithOptions(client, defaultResync)
}

// NewSharedInformerFactoryWithOptions returns a configured factory.
//
// Mirrors [k8s.io/client-go/informers.NewSharedInformerFactoryWithOptions].
func NewSharedInformerFactoryWithOptions(client *Client, defaultResync time.Duration, options ...SharedInformerOption) SharedInformerFactory {
	f := &sharedInformerFactory{
		client:           client,
		namespace:        metav1.NamespaceAll,
		defaultResync:    defaultResync,
		customResync:     map[reflect.Type]time.Duration{},
		informers:        map[informerKey]processor.SharedIndexInformer{},
		startedInformers: map[informerKey]bool{},
	}
	for _, o := range options {
		o(f)
	}
	return f
}

// informerKey names one informer: by Go type for typed ones, by GVR for
// unstructured ones (which all share one Go type).
type informerKey struct {
	typ reflect.Type
	gvr schema.GroupVersionResource
}

type sharedInformerFactory struct {
	client        *Client
	namespace     string
	tweak         TweakListOptionsFunc
	defaultResync time.Duration
	customResync  map[reflect.Type]time.Duration
	transform     deltafifo.TransformFunc
	tp            trace.TracerProvider
	informerName  *processor.InformerName

	lock sync.Mutex
	// Guarded by lock:
	informers        map[informerKey]processor.SharedIndexInformer
	startedInformers map[informerKey]bool
	shuttingDown     bool

	// wg counts running informers, for Shutdown.
	wg sync.WaitGroup
}

func (f *sharedInformerFactory) Start(stopCh <-chan struct{}) {
	f.StartWithContext(wait.ContextForChannel(stopCh))
}

func (f *sharedInformerFactory) StartWithContext(ctx context.Context) {
	f.lock.Lock()
	defer f.lock.Unlock()
	if f.shuttingDown {
		return
	}
	for key, informer := range f.informers {
		if !f.startedInformers[key] {
			f.wg.Go(func() { informer.RunWithContext(ctx) })
			f.startedInformers[key] = true
		}
	}
}

func (f *sharedInformerFactory) Shutdown() {
	f.lock.Lock()
	f.shuttingDown = true
	f.lock.Unlock()
	f.wg.Wait()
	f.informerName.Release()
}

func (f *sharedInformerFactory) InformerName() *processor.InformerName { return f.informerName }

func (f *sharedInformerFactory) WaitForCacheSync(stopCh <-chan struct{}) map[reflect.Type]bool {
	return f.WaitForCacheSyncWithContext(wait.ContextForChannel(stopCh)).Synced
}

func (f *sharedInformerFactory) WaitForCacheSyncWithContext(ctx context.Context) SyncResult {
	f.lock.Lock()
	started := map[informerKey]processor.SharedIndexInformer{}
	for key, informer := range f.informers {
		if f.startedInformers[key] {
			started[key] = informer
		}
	}
	f.lock.Unlock()

	// Sleep on each informer's synced channel: it wakes the moment the
	// last one closes, where polling HasSynced would wake up to a period
	// late (and, under synctest, move fake time).
	checkers := make([]processor.DoneChecker, 0, len(started))
	for _, informer := range started {
		checkers = append(checkers, informer.HasSyncedChecker())
	}
	processor.WaitFor(ctx, "", checkers...)
	res := SyncResult{Synced: make(map[reflect.Type]bool, len(started))}
	for key, informer := range started {
		synced := informer.HasSynced()
		if prev, seen := res.Synced[key.typ]; seen {
			synced = synced && prev // unstructured informers share a type
		}
		res.Synced[key.typ] = synced
		if !synced {
			res.Err = context.Cause(ctx)
		}
	}
	return res
}

// SyncResult is what WaitForCacheSyncWithContext found: each started
// informer's type and whether it synced, and, if one did not, why the wait
// ended (context.Cause of its context).
//
// Mirrors [k8s.io/client-go/tools/cache.SyncResult] (shared_informer.go).
type SyncResult struct {
	// Err is nil when every cache synced, else the context's cause.
	Err error
	// Synced maps each started informer's object type to whether it synced.
	Synced map[reflect.Type]bool
}

// AsError is nil when every cache synced; otherwise an error that names the
// types that did not, in order, and wraps Err.
//
// Mirrors [k8s.io/client-go/tools/cache.SyncResult.AsError] (shared_informer.go).
func (r SyncResult) AsError() error {
	if r.Err == nil {
		return nil
	}
	var unsynced []string
	for t, synced := range r.Synced {
		if !synced {
			unsynced = append(unsynced, t.String())
		}
	}
	slices.Sort(unsynced)
	return fmt.Errorf("failed to sync all caches: %s: %w", strings.Join(unsynced, ", "), r.Err)
}

func (f *sharedInformerFactory) InformerFor(obj runtime.Object, newFunc NewInformerFunc) processor.SharedIndexInformer {
	return f.informerFor(informerKey{typ: reflect.TypeOf(obj)}, newFunc)
}

func (f *sharedInformerFactory) informerFor(key informerKey, newFunc NewInformerFunc) processor.SharedIndexInformer {
	f.lock.Lock()
	defer f.lock.Unlock()
	if informer, ok := f.informers[key]; ok {
		return informer
	}
	resync, ok := f.customResync[key.typ]
	if !ok {
		resync = f.defaultResync
	}
	informer := newFunc(f.client, resync)
	if f.transform != nil {
		_ = informer.SetTransform(f.transform) // not started yet: cannot fail
	}
	f.informers[key] = informer
	return informer
}

// newInformer is the one constructor behind every informer of the factory:
// a ListWatch over client for resource (with the factory's namespace and
// tweak), the namespace index, and the factory's tracer provider.
func (f *sharedInformerFactory) newInformer(client Getter, gvr schema.GroupVersionResource, example runtime.Object, resync time.Duration) processor.SharedIndexInformer {
	resource := gvr.Resource
	lw := reflector.NewFilteredListWatchFromClient(client, resource, f.namespace, func(o *metav1.ListOptions) {
		if f.tweak != nil {
			f.tweak(o)
		}
	})
	return processor.NewSharedIndexInformerWithOptions(lw, example, processor.SharedIndexInformerOptions{
		ResyncPeriod:   resync,
		Indexers:       store.Indexers{store.NamespaceIndex: store.MetaNamespaceIndexFunc},
		Name:           resource,
		TracerProvider: f.tp,
		Identifier:     f.informerName.WithResource(gvr),
	})
}

// Getter is what a ListWatch needs of a REST client; see reflector.Getter.
type Getter = reflector.Getter

// GenericInformer is an informer with a GenericLister, for any resource.
//
// Mirrors [k8s.io/client-go/informers.GenericInformer].
type GenericInformer interface {
	Informer() processor.SharedIndexInformer
	Lister() lister.GenericLister
}

type genericInformer struct {
	informer processor.SharedIndexInformer
	resource schema.GroupResource
}

func (g genericInformer) Informer() processor.SharedIndexInformer { return g.informer }
func (g genericInformer) Lister() lister.GenericLister {
	return lister.NewGenericLister(g.informer.GetIndexer(), g.resource)
}

func (f *sharedInformerFactory) ForResource(gvr schema.GroupVersionResource) (GenericInformer, error) {
	if t, ok := typedResources[gvr]; ok {
		return genericInformer{informer: t(f), resource: gvr.GroupResource()}, nil
	}
	client, err := f.client.UnstructuredClient(gvr.GroupVersion())
	if err != nil {
		return nil, fmt.Errorf("informer for %s: %w", gvr, err)
	}
	informer := f.informerFor(informerKey{typ: reflect.TypeOf(&unstructured.Unstructured{}), gvr: gvr},
		func(_ *Client, resync time.Duration) processor.SharedIndexInformer {
			return f.newInformer(client, gvr, &unstructured.Unstructured{}, resync)
		})
	return genericInformer{informer: informer, resource: gvr.GroupResource()}, nil
}
