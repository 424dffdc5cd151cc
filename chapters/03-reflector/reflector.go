package reflector

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"

	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// The watch timeout a reflector asks for is random in [5m, 10m], so the
// watches of many clients restarted together (an API server rollout) do not
// all expire, and reconnect, at the same moment.
const (
	defaultMinWatchTimeout = 5 * time.Minute
	defaultMaxWatchTimeout = 2 * defaultMinWatchTimeout
)

// tracerName is this package's import path, the contract's instrumentation name.
const tracerName = "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"

// ReflectorStore is what a Reflector writes into. A chapter-1 [store.Store]
// is one (the reflector alone then keeps a cache, without events); the
// DeltaFIFO of chapter 4 is another (each write becomes a delta).
//
// Mirrors [k8s.io/client-go/tools/cache.ReflectorStore] (reflector.go).
type ReflectorStore interface {
	Add(obj any) error
	Update(obj any) error
	Delete(obj any) error
	// Replace is called with the whole state each time the reflector
	// fetches it: a streamed list at its initial-events-end bookmark, or a
	// LIST's result where the server cannot stream.
	Replace(list []any, resourceVersion string) error
	// Resync is called every resync period while watching (if ShouldResync
	// allows); meaningless for a plain store, meaningful for a queue.
	Resync() error
}

// ContextStore is an optional interface of a ReflectorStore that wants the
// reflector's context with every write. The context carries the reflector's
// cycle span (Reflector.ListAndWatch), so a store that starts a trace per
// object (chapter 4's DeltaFIFO) can link each one to the cycle that
// produced it. A store without it gets the plain calls.
//
// Not in client-go: its DeltaFIFO is not traced.
type ContextStore interface {
	AddWithContext(ctx context.Context, obj any) error
	UpdateWithContext(ctx context.Context, obj any) error
	DeleteWithContext(ctx context.Context, obj any) error
	ReplaceWithContext(ctx context.Context, list []any, resourceVersion string) error
	ResyncWithContext(ctx context.Context) error
}

// ReflectorBookmarkStore is an optional interface of a store that wants to
// hear each bookmark's resourceVersion.
//
// Mirrors [k8s.io/client-go/tools/cache.ReflectorBookmarkStore] (reflector.go).
type ReflectorBookmarkStore interface {
	Bookmark(resourceVersion string) error
}

// ResourceVersionUpdater is an optional interface of a store that wants to
// hear every resourceVersion the reflector reaches while watching.
//
// Mirrors [k8s.io/client-go/tools/cache.ResourceVersionUpdater] (reflector.go).
type ResourceVersionUpdater interface {
	UpdateResourceVersion(resourceVersion string)
}

// ReflectorOptions configures a Reflector.
//
// Mirrors [k8s.io/client-go/tools/cache.ReflectorOptions] (reflector.go),
// without Clock (tests use testing/synctest instead of a fake clock), with
// TracerProvider and UseWatchList added.
type ReflectorOptions struct {
	// Name identifies the reflector in errors, logs and spans
	// (informer.name). Default: the type description.
	Name string
	// TypeDescription describes the expected type for messages. Default: the
	// Go type of expectedType, or the GVK of an Unstructured one.
	TypeDescription string
	// ResyncPeriod: if non-zero, store.Resync is called this often while
	// watching (when ShouldResync allows).
	ResyncPeriod time.Duration
	// MinWatchTimeout raises the lower bound of the random watch timeout;
	// values below 5 minutes are ignored, as upstream, to protect the API
	// server from a flood of short watches.
	MinWatchTimeout time.Duration
	// Backoff replaces the default retry pacing (800ms doubling to 30s).
	Backoff *Backoff
	// UseWatchList, if set, decides for this reflector whether the initial
	// state is streamed (a WATCH with sendInitialEvents=true, falling back to
	// a LIST when the server cannot stream) or LISTed. nil, the default,
	// follows the WatchListClient feature gate ([FeatureGates]), which is on
	// in v0.37.2 unless switched off in client-go's features registry (by
	// KUBE_FEATURE_WatchListClient=false or in code). Either way a
	// ListerWatcher that opts out ([DoesClientNotSupportWatchListSemantics])
	// is LISTed.
	//
	// Not in client-go, where only the process-wide gate decides: ours lets
	// one program run both conversations side by side (the demo, the
	// tests) without touching the environment.
	UseWatchList *bool
	// TracerProvider for the Reflector.* cycle spans; default the global one.
	TracerProvider trace.TracerProvider
	// Logger, if set, replaces klog.Background() for what the reflector
	// logs while it is built (that its client cannot stream). Everything
	// logged while it runs goes to the logger in the context it runs with
	// (klog.FromContext), as upstream's.
	Logger *klog.Logger
}

// Reflector keeps a store in step with the API server: fetch the whole
// state (streamed on a WATCH with sendInitialEvents, the default, or a LIST
// where the server cannot stream), Replace the store with it, then watch
// from its resourceVersion and apply each event, until something goes
// wrong; then back off and do it again.
//
// Mirrors [k8s.io/client-go/tools/cache.Reflector] (reflector.go).
type Reflector struct {
	name            string
	typeDescription string
	// expectedType and expectedGVK guard the store: events carrying any other
	// type are dropped (and reported), never stored.
	expectedType  reflect.Type
	expectedGVK   *schema.GroupVersionKind
	store         ReflectorStore
	listerWatcher ListerWatcherWithContext
	resyncPeriod  time.Duration
	backoff       *backoffManager
	minWatchTimeout,
	maxWatchTimeout time.Duration
	// useWatchList: the initial state is streamed (watchList) before any
	// LIST; decided once, at construction, as upstream.
	useWatchList bool
	// testSource: the ListerWatcher says it is one of client-go's test
	// doubles (see isTestSource), whose objects carry no resourceVersions;
	// their resourceVersions are then taken as they come, as upstream takes
	// every source's, instead of refused.
	testSource     bool
	tracer         trace.Tracer
	tracerProvider trace.TracerProvider
	// nameAttr is built once: it goes on every span.
	nameAttr attribute.KeyValue

	// paginatedResult is set when the first LIST (at RV "0") came back in
	// pages: the API server has no watch cache for this resource, so later
	// lists keep paging instead of asking for everything at once. Only the
	// ListAndWatch goroutine touches it.
	paginatedResult bool

	// retryingSince is when the watch requests began to be retried (a
	// refused connection or a 429) without one opening since, zero while
	// none is; nextRetryReport is how long such retrying must last before
	// the WatchErrorHandler is told (reportWatchRetry). Only the
	// ListAndWatch goroutine touches them.
	retryingSince   time.Time
	nextRetryReport time.Duration

	rvMu sync.RWMutex
	// Guarded by rvMu:

	// lastSyncResourceVersion is the RV of the last state (a stream's
	// bookmark, or a LIST) or watch event applied to the store: where the next WATCH (or relist) starts.
	lastSyncResourceVersion string
	// isLastSyncResourceVersionUnavailable is set when a request at
	// lastSyncResourceVersion failed as expired or too large: the next list
	// must then ask for the latest data (RV "") instead.
	isLastSyncResourceVersionUnavailable bool

	handlerMu         sync.RWMutex
	watchErrorHandler WatchErrorHandlerWithContext // guarded by handlerMu

	// WatchListPageSize, if set, is the page size of every LIST; see list for
	// the rules when it is not.
	WatchListPageSize int64
	// ShouldResync, if set, is asked at every resync tick; store.Resync is
	// called only when it says yes. nil means always yes.
	ShouldResync func() bool
	// MaxInternalErrorRetryDuration: a watch ended by an internal error (500)
	// is re-opened at once, without a relist, for up to this long. Zero
	// means relist on the first one.
	MaxInternalErrorRetryDuration time.Duration
}

// NewReflector returns a Reflector that keeps store in step with lw.
// expectedType is an example object of the type to store (nil accepts any).
//
// Mirrors [k8s.io/client-go/tools/cache.NewReflector] (reflector.go).
func NewReflector(lw ListerWatcher, expectedType any, store ReflectorStore, resyncPeriod time.Duration) *Reflector {
	return NewReflectorWithOptions(lw, expectedType, store, ReflectorOptions{ResyncPeriod: resyncPeriod})
}

// NewNamedReflector is [NewReflector] with a name.
//
// Mirrors [k8s.io/client-go/tools/cache.NewNamedReflector] (reflector.go).
func NewNamedReflector(name string, lw ListerWatcher, expectedType any, store ReflectorStore, resyncPeriod time.Duration) *Reflector {
	return NewReflectorWithOptions(lw, expectedType, store, ReflectorOptions{Name: name, ResyncPeriod: resyncPeriod})
}

// NewReflectorWithOptions returns a configured Reflector.
//
// Mirrors [k8s.io/client-go/tools/cache.NewReflectorWithOptions] (reflector.go).
// Upstream's default name is the caller's file:line; ours is the type
// description, which reads better in traces.
func NewReflectorWithOptions(lw ListerWatcher, expectedType any, store ReflectorStore, options ReflectorOptions) *Reflector {
	minTimeout := max(defaultMinWatchTimeout, options.MinWatchTimeout)
	bo := DefaultBackoff()
	if options.Backoff != nil {
		bo = *options.Backoff
	}
	r := &Reflector{
		name:              options.Name,
		typeDescription:   options.TypeDescription,
		expectedType:      reflect.TypeOf(expectedType),
		store:             store,
		listerWatcher:     ToListerWatcherWithContext(lw),
		resyncPeriod:      options.ResyncPeriod,
		backoff:           newBackoffManager(bo),
		minWatchTimeout:   minTimeout,
		maxWatchTimeout:   2 * minTimeout,
		tracer:            tracing.Tracer(options.TracerProvider, tracerName),
		tracerProvider:    options.TracerProvider,
		watchErrorHandler: DefaultWatchErrorHandler,
	}
	if u, ok := expectedType.(*unstructured.Unstructured); ok {
		if gvk := u.GroupVersionKind(); !gvk.Empty() {
			r.expectedGVK = &gvk
		}
	}
	if r.typeDescription == "" {
		r.typeDescription = TypeDescription(expectedType)
	}
	if r.name == "" {
		r.name = r.typeDescription
	}
	r.nameAttr = tracing.KeyInformerName.String(r.name)

	// The gate first, then the ListerWatcher's own say: a client that
	// cannot stream (a fake clientset) is LISTed whatever the gate says.
	// Asked of lw as given, before any wrapping, as upstream does.
	r.useWatchList = FeatureGates().Enabled(WatchListClient)
	if options.UseWatchList != nil {
		r.useWatchList = *options.UseWatchList
	}
	if r.useWatchList && DoesClientNotSupportWatchListSemantics(lw) {
		logger := klog.Background()
		if options.Logger != nil {
			logger = *options.Logger
		}
		klog.LoggerWithName(logger, r.name).V(2).Info("The client used to build this reflector says it cannot stream (IsWatchListSemanticsUnSupported): "+
			"it will LIST. This is expected of client-go's fakes in unit tests, not of a real clientset in production.",
			"feature", WatchListClient)
		r.useWatchList = false
	}
	r.testSource = isTestSource(lw)
	return r
}

// isTestSource reports whether lw is a test double rather than an API
// server: it answers IsWatchListSemanticsUnSupported() with true
// ([DoesClientNotSupportWatchListSemantics]). In client-go v0.37.2 only the
// fakes say so (kubernetes/fake.Clientset, dynamic/fake, metadata/fake,
// testing's ObjectTracker), and a generated informer passes the client's
// answer on through ToListWatcherWithWatchListSemantics; upstream's
// NewReflectorWithOptions logs, when it sees the answer, that it is
// "expected in unit tests but not in production". A real clientset does not
// have the method.
//
// It matters for resourceVersions. A fake's tracker versions its LISTs
// (list metadata.resourceVersion "1", then a counter) but not its objects:
// every watch event carries the object as the test wrote it, usually with
// no resourceVersion. From an API server such an event is malformed and
// refused (checkEvent); from a test double it is that source's normal, and
// refusing it would relist after every event with a growing backoff (six
// creates, each waited for, took over a minute). So a test source's
// resourceVersions, of events and LISTs, are taken as they come, as
// upstream takes everyone's. Nothing else is relaxed: a nameless object or
// one of the wrong type is refused from a test source too.
//
// The answer is read from the data's source, not from the data: an empty
// resourceVersion cannot tell a fake from a broken server, and a fake's
// LIST carries a valid one.
func isTestSource(lw ListerWatcher) bool {
	return DoesClientNotSupportWatchListSemantics(lw)
}

// UsesWatchList reports whether the reflector streams the initial state
// (see [ReflectorOptions].UseWatchList). Not in client-go, whose field is
// unexported; the demo and the tests show which conversation to expect.
func (r *Reflector) UsesWatchList() bool { return r.useWatchList }

// Name returns the reflector's name.
func (r *Reflector) Name() string { return r.name }

// TypeDescription describes the type the reflector stores.
func (r *Reflector) TypeDescription() string { return r.typeDescription }

// SetWatchErrorHandler replaces the handler told of list and watch failures.
//
// Upstream sets it through the informer (SharedInformer.SetWatchErrorHandler,
// chapter 5); here the reflector has the setter itself so chapter 3 stands
// alone.
func (r *Reflector) SetWatchErrorHandler(handler WatchErrorHandler) {
	r.SetWatchErrorHandlerWithContext(func(_ context.Context, r *Reflector, err error) { handler(r, err) })
}

// SetWatchErrorHandlerWithContext is [Reflector.SetWatchErrorHandler] for a
// handler that takes the reflector's context.
func (r *Reflector) SetWatchErrorHandlerWithContext(handler WatchErrorHandlerWithContext) {
	r.handlerMu.Lock()
	defer r.handlerMu.Unlock()
	r.watchErrorHandler = handler
}

func (r *Reflector) reportError(ctx context.Context, err error) {
	r.handlerMu.RLock()
	h := r.watchErrorHandler
	r.handlerMu.RUnlock()
	h(ctx, r, err)
}

// Run runs the reflector until stopCh is closed.
//
// Mirrors [k8s.io/client-go/tools/cache.Reflector.Run] (reflector.go).
func (r *Reflector) Run(stopCh <-chan struct{}) {
	r.RunWithContext(wait.ContextForChannel(stopCh))
}

// RunWithContext runs ListAndWatch again and again until ctx is done,
// reporting each failure to the WatchErrorHandler and waiting the next
// backoff delay after every return, failed or not.
//
// Mirrors [k8s.io/client-go/tools/cache.Reflector.RunWithContext] (reflector.go).
func (r *Reflector) RunWithContext(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.V(3).Info("Starting reflector", "type", r.typeDescription, "resyncPeriod", r.resyncPeriod, "reflector", r.name)
	defer logger.V(3).Info("Stopping reflector", "type", r.typeDescription, "resyncPeriod", r.resyncPeriod, "reflector", r.name)
	for {
		r.runCycle(ctx)
		t := time.NewTimer(r.backoff.delay())
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// runCycle runs one ListAndWatch and reports its failure, under
// utilruntime.HandleCrashWithContext, as upstream's RunWithContext runs each
// through wait's backoff loop (which wraps every call so): a panic in the
// store or in a handler called from it is logged through the context's
// logger and passed to utilruntime.PanicHandlers, and then, as
// utilruntime.ReallyCrash is true unless a program sets it false, the panic
// goes on and ends the process. With ReallyCrash false the reflector backs
// off and starts the next cycle, as upstream's does.
func (r *Reflector) runCycle(ctx context.Context) {
	defer utilruntime.HandleCrashWithContext(ctx)
	if err := r.ListAndWatchWithContext(ctx); err != nil {
		r.reportError(ctx, err)
	}
}

// ListAndWatch is [Reflector.ListAndWatchWithContext] with a stop channel.
//
// Mirrors [k8s.io/client-go/tools/cache.Reflector.ListAndWatch] (reflector.go).
func (r *Reflector) ListAndWatch(stopCh <-chan struct{}) error {
	return r.ListAndWatchWithContext(wait.ContextForChannel(stopCh))
}

// ListAndWatchWithContext fetches the whole state, replaces the store with
// it, then watches until the watch fails in a way that needs a relist. The
// state is streamed (watchList) when the reflector uses watch-list, the
// default; it is LISTed when it does not, or when the stream fails in a way
// that streaming again cannot mend (a server that cannot stream). It
// returns nil when ctx is done.
//
// Mirrors [k8s.io/client-go/tools/cache.Reflector.ListAndWatchWithContext] (reflector.go).
func (r *Reflector) ListAndWatchWithContext(ctx context.Context) (err error) {
	ctx, span := r.tracer.Start(ctx, tracing.SpanListAndWatchCycle,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(r.nameAttr))
	defer func() { endSpan(span, err) }()
	defer func() {
		// A stop is not a failure, whatever the request in flight made of
		// it ("context canceled", a stalled request abandoned, a closed
		// connection): nothing may reach the WatchErrorHandler.
		if ctx.Err() != nil {
			err = nil
		}
	}()

	logger := klog.FromContext(ctx)
	logger.V(3).Info("Listing and watching", "type", r.typeDescription, "reflector", r.name)
	var w watch.Interface
	if r.useWatchList {
		w, err = r.watchList(ctx)
		if w == nil && err == nil {
			return nil // stopped
		}
		if err != nil {
			// The server cannot stream (422 from one whose WatchList is
			// off, or a stream that ends at once), or the store refused
			// the result: the classic LIST still works there. The
			// fallback is an event on the cycle span and, as upstream's,
			// a V(4) line; no handler is told: the LIST that follows is
			// the answer, and its own failure is reported.
			if span.IsRecording() {
				span.AddEvent(tracing.EventWatchListFallback, trace.WithAttributes(r.nameAttr, tracing.KeyFallbackReason.String(tracing.Cut(err.Error(), tracing.MaxMessageBytes))))
			}
			logger.V(4).Info("Data couldn't be fetched in watchlist mode. Falling back to regular list. "+
				"This is expected if watchlist is not supported or disabled in kube-apiserver.", "err", err)
			w, err = nil, nil
		}
	}
	if w == nil {
		if err = r.list(ctx); err != nil {
			return err
		}
	}
	logger.V(2).Info("Caches populated", "type", r.typeDescription, "reflector", r.name)
	return r.watchWithResync(ctx, w)
}

// list fetches the whole state with LIST and replaces the store with it.
func (r *Reflector) list(ctx context.Context) (err error) {
	options := metav1.ListOptions{ResourceVersion: r.relistResourceVersion()}
	cycleCtx := ctx // listed objects' traces link to the cycle, not to the LIST
	ctx, span := r.tracer.Start(ctx, tracing.SpanList, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(r.nameAttr))
	defer func() { endSpan(span, err) }()

	// Paging rules (upstream reflector.list), in order:
	//  - WatchListPageSize set: page by it.
	//  - the first list came back paged: keep paging (no watch cache).
	//  - RV is neither "" nor "0": do not page, so the API server can answer
	//    from its watch cache (a paged request at a specific RV goes to etcd,
	//    and after an API server restart every client doing that at once is a
	//    thundering herd on etcd).
	//  - otherwise ("0" or ""): page by 500.
	pageSize := int64(defaultPageSize)
	switch {
	case r.WatchListPageSize != 0:
		pageSize = r.WatchListPageSize
	case r.paginatedResult:
	case options.ResourceVersion != "" && options.ResourceVersion != "0":
		pageSize = 0
	}

	// Each page's items are checked (and, for a ReusingStore, traded for
	// the cached objects that did not change) as the page arrives.
	items := r.newListItems()
	rv, paged, err := listInPages(ctx, r.listerWatcher, options, pageSize, items)
	if isExpiredError(err) || isTooLargeResourceVersionError(err) {
		// Our RV is unusable (compacted away, or the server is behind it).
		// Retry at once with RV "": a consistent read of the latest state.
		r.setIsLastSyncResourceVersionUnavailable(true)
		items.reset()
		rv, paged, err = listInPages(ctx, r.listerWatcher, metav1.ListOptions{ResourceVersion: r.relistResourceVersion()}, pageSize, items)
	}
	if ctx.Err() != nil {
		return nil // stopped while listing: not a failure
	}
	if err != nil {
		// Whatever pages arrived are dropped with items: the store and its
		// handlers never see a part of a list.
		return fmt.Errorf("failed to list %v: %w", r.typeDescription, err)
	}
	if options.ResourceVersion == "0" && paged {
		r.paginatedResult = true
	}
	r.setIsLastSyncResourceVersionUnavailable(false)
	span.SetAttributes(tracing.KeyResourceVersion.String(tracing.Value(rv)), tracing.KeyListItems.Int(items.seen))

	items.reportRefused(ctx, rv)
	found := items.found
	rctx := cycleCtx
	if items.prepared != nil {
		rctx = WithPrepared(rctx, items.prepared)
	}
	// Replace first, record the RV second: if Replace fails, the next attempt
	// must list again from the old RV rather than watch from one whose state
	// never reached the store.
	if err := replace(rctx, r.store, found, rv); err != nil {
		return fmt.Errorf("unable to sync list result: %w", err)
	}
	if !validResourceVersion(rv) && !r.testSource {
		// The items are the server's whole state and go to the store, but
		// the list's RV is not recorded: a WATCH from "" starts "now" with
		// synthetic ADDED events, so every delete between this LIST and that
		// WATCH would be lost for good (the same hole as a bad watch-event
		// RV, see handleWatch). Ending the cycle makes RunWithContext report
		// this once and relist after the backoff. Upstream records it as it
		// comes (reflector.go list).
		return fmt.Errorf("%s: the LIST of %v returned list metadata.resourceVersion %q, which is not a decimal number; "+
			"the %d items were stored but the resourceVersion was not recorded, so no watch can start from it; relisting after the backoff",
			r.name, r.typeDescription, rv, len(found))
	}
	r.setLastSyncResourceVersion(rv)
	return nil
}

// listItems gathers a LIST's items, page by page (a pageSink), keeping the
// ones the store may hold and refusing the ones the watch path would refuse
// too: another Go type or GVK than expected, no metadata, no name.
// Upstream's list() stores whatever the LIST returned, so a ListerWatcher
// for the wrong resource fills, say, a Pod cache with ConfigMaps, while its
// watch path drops the same objects.
//
// When the store is a [ReusingStore], each kept item goes through its
// ReuseRelisted as its page arrives: an item the cache holds unchanged is
// kept as the cached object, and the page's copy is garbage at once.
type listItems struct {
	r        *Reflector
	reuse    ReusingStore // nil: items kept as listed
	found    []any
	prepared []bool // per found item; nil when reuse is
	refused  []string
	seen     int // items taken, refused ones included
}

func (r *Reflector) newListItems() *listItems {
	l := &listItems{r: r}
	l.reuse, _ = r.store.(ReusingStore)
	l.reset()
	return l
}

func (l *listItems) take(items []runtime.Object) {
	for _, item := range items {
		i := l.seen
		l.seen++
		if why := l.r.refuseReason(item); why != "" {
			l.refused = append(l.refused, fmt.Sprintf("item %d %s", i, why))
			continue
		}
		if l.reuse == nil {
			l.found = append(l.found, item)
			continue
		}
		obj, prepared := l.reuse.ReuseRelisted(item)
		l.found = append(l.found, obj)
		l.prepared = append(l.prepared, prepared)
	}
}

func (l *listItems) reset() {
	l.found, l.prepared, l.refused, l.seen = nil, nil, nil, 0
	if l.reuse != nil {
		l.prepared = []bool{} // not nil: the Replace is told, even when empty
	}
}

// reportRefused reports the refused items, once per LIST, with their count
// and the first few: a LIST of the wrong resource may carry thousands, and
// it is one mistake, not thousands. There is no relist: a LIST is a
// consistent snapshot, so the server would send the same items again.
func (l *listItems) reportRefused(ctx context.Context, rv string) {
	const named = 3 // offenders named in the report
	if len(l.refused) == 0 {
		return
	}
	first := l.refused[:min(named, len(l.refused))]
	more := ""
	if len(l.refused) > named {
		more = fmt.Sprintf(" and %d more", len(l.refused)-named)
	}
	l.r.reportError(ctx, fmt.Errorf("%s: refused %d of %d items of the LIST at resourceVersion %s: %s%s; "+
		"they never reach the store or any handler; the store holds the other %d items (no relist: the server would send the same ones)",
		l.r.name, len(l.refused), l.seen, rv, strings.Join(first, "; "), more, len(l.found)))
}

// refuseReason says why obj may not enter the store, or "" if it may.
func (r *Reflector) refuseReason(obj runtime.Object) string {
	if r.expectedType != nil {
		if got := reflect.TypeOf(obj); got != r.expectedType {
			return fmt.Sprintf("(%s) is a %v; this reflector stores only %v (is the ListerWatcher for the right resource?)",
				describe(obj), got, r.expectedType)
		}
	}
	if r.expectedGVK != nil {
		if got := obj.GetObjectKind().GroupVersionKind(); got != *r.expectedGVK {
			return fmt.Sprintf("(%s) is %v; this reflector stores only %v", describe(obj), got, *r.expectedGVK)
		}
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("(%T) has no metadata: %v", obj, err)
	}
	if m.GetName() == "" {
		return fmt.Sprintf("(namespace %q, resourceVersion %q) has no metadata.name, so it cannot be keyed", m.GetNamespace(), m.GetResourceVersion())
	}
	return ""
}

// describe names obj for a message as "namespace/name", or its Go type.
func describe(obj runtime.Object) string {
	if m, err := meta.Accessor(obj); err == nil {
		return objectRef(m)
	}
	return fmt.Sprintf("%T", obj)
}

// watchWithResync watches with the resync timer running beside it: resyncs
// happen only while the reflector is watching, never while it lists or backs
// off.
func (r *Reflector) watchWithResync(ctx context.Context, w watch.Interface) error {
	resyncErr := make(chan error, 1)
	resyncCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait() // the resync goroutine is gone before ListAndWatch returns
	}()
	wg.Go(func() { r.startResync(resyncCtx, resyncErr) })
	return r.watch(ctx, w, resyncErr)
}

func (r *Reflector) startResync(ctx context.Context, resyncErr chan<- error) {
	if r.resyncPeriod == 0 {
		return
	}
	t := time.NewTimer(r.resyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if r.ShouldResync == nil || r.ShouldResync() {
			if err := resync(ctx, r.store); err != nil {
				resyncErr <- err
				return
			}
		}
		t.Reset(r.resyncPeriod)
	}
}

// watch opens watches from the last synced RV and applies their events,
// re-opening after a normal close, until an error calls for a relist. w, if
// not nil, is an already open watch (the one a watch-list streamed on).
func (r *Reflector) watch(ctx context.Context, w watch.Interface, resyncErr chan error) error {
	retry := &retryWithDeadline{maxDuration: r.MaxInternalErrorRetryDuration, resetAfter: time.Minute,
		isRetryable: apierrors.IsInternalError}
	defer func() {
		if w != nil {
			w.Stop()
		}
	}()
	for {
		if ctx.Err() != nil {
			return nil
		}
		start := time.Now()
		// A watch from "" or "0" begins with synthetic ADDED events in no RV
		// order; the RV may only be recorded once past them.
		propagateRVFromStart := true
		var span trace.Span
		var err error
		if w == nil {
			var next watchNext
			w, span, propagateRVFromStart, next, err = r.openWatch(ctx)
			switch next {
			case stopWatching:
				return nil
			case watchAgain:
				continue
			case relistAfterError:
				return err
			}
		} else {
			_, span = r.tracer.Start(ctx, tracing.SpanWatch, trace.WithSpanKind(trace.SpanKindClient),
				trace.WithAttributes(r.nameAttr, tracing.KeyResourceVersion.String(tracing.Value(r.LastSyncResourceVersion()))))
		}

		_, err = r.handleWatch(ctx, start, w, r.store, false, resyncErr, func(rv string, pastSynthetic bool) {
			if propagateRVFromStart || pastSynthetic {
				r.setLastSyncResourceVersion(rv)
				if u, ok := r.store.(ResourceVersionUpdater); ok {
					u.UpdateResourceVersion(rv)
				}
			}
		})
		w = nil // handleWatch stopped it
		endSpan(span, err)
		retry.after(err)
		switch {
		case err == nil:
			// Closed normally (timeout, server restart): watch again from
			// where we are. No relist needed, nothing was missed.
			continue
		case errors.Is(err, errorStopRequested):
			return nil
		case errors.Is(err, errWatchUntrusted):
			// Reported by handleWatch, naming the event; returning nil
			// avoids a second, vaguer report. The cycle still ends, so the
			// next one relists.
			return nil
		case apierrors.IsTooManyRequests(err):
			d := r.backoff.delay()
			r.reportWatchRetry(ctx, retryWatchEnded, r.LastSyncResourceVersion(), d, err)
			if !r.sleep(ctx, d) {
				return nil
			}
			continue
		case apierrors.IsInternalError(err) && retry.shouldRetry():
			continue
		}
		// Everything else ends this ListAndWatch and so causes a relist:
		// Expired (410: our RV is too old to watch from), an Error event, a
		// very short watch, an undecodable stream.
		return &watchEndedError{typeDescription: r.typeDescription, err: err}
	}
}

// watchNext is what watch does after openWatch.
type watchNext int

const (
	// handleEvents: the watch is open.
	handleEvents watchNext = iota
	// stopWatching: ctx ended.
	stopWatching
	// watchAgain: the request failed in a way retried without a relist
	// (reported, and its backoff waited out).
	watchAgain
	// relistAfterError: the request failed; the cycle ends with the error.
	relistAfterError
)

// openWatch sends a WATCH from the last synced resourceVersion, with a
// Reflector.watch span that the caller ends. fromStart says whether the
// events' resourceVersions may be recorded from the first one: not for a
// watch from "" or "0", which begins with synthetic ADDED events in no RV
// order.
func (r *Reflector) openWatch(ctx context.Context) (w watch.Interface, span trace.Span, fromStart bool, next watchNext, err error) {
	rv := r.LastSyncResourceVersion()
	timeout := r.watchTimeoutSeconds()
	options := metav1.ListOptions{
		ResourceVersion: rv,
		// A watch with no events must still end now and then, or a
		// connection silently broken by the network would hang forever.
		TimeoutSeconds: &timeout,
		// Bookmarks let the RV advance while nothing changes, so a
		// re-watch after a quiet period does not start from an RV the
		// server has compacted away.
		AllowWatchBookmarks: true,
	}
	fromStart = rv != "" && rv != "0"
	wctx, span := r.tracer.Start(ctx, tracing.SpanWatch, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(r.nameAttr, tracing.KeyResourceVersion.String(tracing.Value(rv))))
	w, err = r.listerWatcher.WatchWithContext(wctx, options)
	switch {
	case err == nil:
		r.resetRetrying()
		return w, span, fromStart, handleEvents, nil
	case ctx.Err() != nil:
		// Stopped while the request was being opened: the error is only
		// the cancellation. Upstream's watch returns it, and its Run hands
		// "context canceled" to the WatchErrorHandler.
		endSpan(span, errorStopRequested)
		return nil, nil, false, stopWatching, nil
	case isWatchErrorRetriable(err):
		endSpan(span, err)
		d := r.backoff.delay()
		r.reportWatchRetry(ctx, retryWatchRequest, rv, d, err)
		if !r.sleep(ctx, d) {
			return nil, nil, false, stopWatching, nil
		}
		return nil, nil, false, watchAgain, nil
	}
	endSpan(span, err)
	return nil, nil, false, relistAfterError, fmt.Errorf("failed to watch %v: %w", r.typeDescription, err)
}

// retryWhere says which of upstream's retries a watch retry is, for the
// line upstream logs there.
type retryWhere int

const (
	retryWatchRequest retryWhere = iota // a WATCH request refused or answered 429
	retryWatchEnded                     // an open watch ended by a 429 ERROR event
	retryWatchList                      // a watch-list stream's request refused or answered 429
)

// retryReportAfter is how long watch requests must have been retried, none
// opening, before the WatchErrorHandler hears of it; each report doubles the
// wait for the next.
const retryReportAfter = time.Minute

// reportWatchRetry logs a watch request that is retried without a relist
// (isWatchErrorRetriable: a 429, on the request or as an ERROR event on the
// stream, or a refused connection) as upstream's reflector.go logs it, with
// its message at its verbosity: "Watch failed - backing off" at V(4) for a
// request, "Watch returned 429 - backing off" and "watch-list failed -
// backing off" at V(2). So at klog's default verbosity a brief outage or a
// few 429s say nothing, as with client-go. The retry itself (back off, watch
// again from the same RV) is upstream's.
//
// Ours adds one thing: when the retries have gone on for retryReportAfter
// with no watch opened (resetRetrying), the WatchErrorHandler is told once,
// saying for how long, from which RV and what to check, and again each time
// that time doubles. Upstream never says anything at default verbosity, so
// an informer whose API server never comes back waits for good with nothing
// in its log; before, ours reported every retry, an error line every few
// seconds through an outage that client-go rides out quietly.
func (r *Reflector) reportWatchRetry(ctx context.Context, where retryWhere, rv string, delay time.Duration, err error) {
	logger := klog.FromContext(ctx)
	switch where {
	case retryWatchRequest:
		logger.V(4).Info("Watch failed - backing off", "reflector", r.name, "type", r.typeDescription, "err", err)
	case retryWatchEnded:
		logger.V(2).Info("Watch returned 429 - backing off", "reflector", r.name, "type", r.typeDescription)
	case retryWatchList:
		logger.V(2).Info("watch-list failed - backing off", "reflector", r.name, "type", r.typeDescription, "err", err)
	}
	now := time.Now()
	if r.retryingSince.IsZero() {
		r.retryingSince, r.nextRetryReport = now, retryReportAfter
	}
	lasted := now.Sub(r.retryingSince)
	if lasted < r.nextRetryReport {
		return
	}
	r.nextRetryReport *= 2
	what := "has answered the watches of %v with 429 Too Many Requests (it is overloaded)"
	if !apierrors.IsTooManyRequests(err) {
		what = "has refused the connection for the watches of %v (it is down, restarting, or not at this address); " +
			"check that the API server runs and that the kubeconfig's server address is right"
	}
	r.reportError(ctx, fmt.Errorf("%s: for %v the API server "+what+"; no watch is open, so the cache is not kept up to date; "+
		"still retrying the watch from resourceVersion %q (next in %v), without a relist: %w",
		r.name, lasted.Round(time.Second), r.typeDescription, rv, delay.Round(time.Millisecond), err))
}

// resetRetrying: a watch opened, so the retries (if any) are over.
func (r *Reflector) resetRetrying() { r.retryingSince = time.Time{} }

// watchTimeoutSeconds is a random timeout in [minWatchTimeout, maxWatchTimeout].
func (r *Reflector) watchTimeoutSeconds() int64 {
	return int64(r.minWatchTimeout.Seconds() + rand.Float64()*(r.maxWatchTimeout.Seconds()-r.minWatchTimeout.Seconds()))
}

// sleep waits d or until ctx is done; false means stopped.
func (r *Reflector) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// LastSyncResourceVersion is the resourceVersion of the last state (a
// stream's bookmark, or a LIST) or watch event the reflector applied to its
// store.
//
// Mirrors [k8s.io/client-go/tools/cache.Reflector.LastSyncResourceVersion] (reflector.go).
func (r *Reflector) LastSyncResourceVersion() string {
	r.rvMu.RLock()
	defer r.rvMu.RUnlock()
	return r.lastSyncResourceVersion
}

func (r *Reflector) setLastSyncResourceVersion(v string) {
	r.rvMu.Lock()
	defer r.rvMu.Unlock()
	r.lastSyncResourceVersion = v
}

func (r *Reflector) setIsLastSyncResourceVersionUnavailable(v bool) {
	r.rvMu.Lock()
	defer r.rvMu.Unlock()
	r.isLastSyncResourceVersionUnavailable = v
}

// relistResourceVersion is the RV to LIST at:
//   - "0" the first time: any recent state is fine, and "0" lets the API
//     server answer from its watch cache without touching etcd;
//   - the last synced RV afterwards: never go back in time;
//   - "" after that RV proved unusable: a quorum read of the latest state.
func (r *Reflector) relistResourceVersion() string {
	r.rvMu.RLock()
	defer r.rvMu.RUnlock()
	switch {
	case r.isLastSyncResourceVersionUnavailable:
		return ""
	case r.lastSyncResourceVersion == "":
		return "0"
	}
	return r.lastSyncResourceVersion
}

// rewatchResourceVersion is the RV a watch-list starts streaming from.
func (r *Reflector) rewatchResourceVersion() string {
	r.rvMu.RLock()
	defer r.rvMu.RUnlock()
	if r.isLastSyncResourceVersionUnavailable {
		return ""
	}
	return r.lastSyncResourceVersion
}

// endSpan records err (if any, and not a stop) and ends span.
func endSpan(span trace.Span, err error) {
	if err != nil && !errors.Is(err, errorStopRequested) {
		tracing.SetError(span, err, true)
	}
	span.End()
}

// The writes below pass ctx on to a ContextStore and drop it otherwise.

func add(ctx context.Context, s ReflectorStore, obj any) error {
	if c, ok := s.(ContextStore); ok {
		return c.AddWithContext(ctx, obj)
	}
	return s.Add(obj)
}

func update(ctx context.Context, s ReflectorStore, obj any) error {
	if c, ok := s.(ContextStore); ok {
		return c.UpdateWithContext(ctx, obj)
	}
	return s.Update(obj)
}

func remove(ctx context.Context, s ReflectorStore, obj any) error {
	if c, ok := s.(ContextStore); ok {
		return c.DeleteWithContext(ctx, obj)
	}
	return s.Delete(obj)
}

func replace(ctx context.Context, s ReflectorStore, list []any, rv string) error {
	if c, ok := s.(ContextStore); ok {
		return c.ReplaceWithContext(ctx, list, rv)
	}
	return s.Replace(list, rv)
}

func resync(ctx context.Context, s ReflectorStore) error {
	if c, ok := s.(ContextStore); ok {
		return c.ResyncWithContext(ctx)
	}
	return s.Resync()
}

// TypeDescription is the reflector's default TypeDescription of
// expectedType: its Go type ("*v1.Pod"), or, for an
// *unstructured.Unstructured whose apiVersion and kind are set, its GVK as
// schema.GroupVersionKind prints it ("example.com/v1, Kind=Widget"), since
// every unstructured informer has the same Go type; "<unspecified>" for
// nil. Chapter 5 and dropin default an informer's description (and so its
// name in spans) to it, as client-go's informer leaves the description to
// its reflector.
//
// Mirrors the unexported getTypeDescriptionFromObject of upstream
// reflector.go.
func TypeDescription(expectedType any) string {
	if expectedType == nil {
		return "<unspecified>"
	}
	if u, ok := expectedType.(*unstructured.Unstructured); ok {
		if gvk := u.GroupVersionKind(); !gvk.Empty() {
			return gvk.String()
		}
	}
	return reflect.TypeOf(expectedType).String()
}
