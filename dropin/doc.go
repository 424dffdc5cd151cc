// Package dropin runs this project's informer behind client-go's interfaces,
// so a controller written against k8s.io/client-go/tools/cache runs on it
// unchanged and every object's path can be traced, from the watch through
// the user's handler and workqueue to the reconcile.
//
// # The informer
//
// [NewSharedInformer], [NewSharedIndexInformer] and
// [NewSharedIndexInformerWithOptions] have client-go's signatures and return
// client-go's interfaces, built on the chapters: chapter 3's reflector
// (streaming the initial state, as client-go v0.37.2 does by default),
// chapter 4's RealFIFO and chapter 5's processor, over chapter 1's indexer.
// No client-go informer runs inside; client-go's types appear only where a
// value crosses into or out of the chapters:
//
//   - handlers go in as they are, with one conversion on the way out: a
//     delete whose final state was missed reaches them as
//     [k8s.io/client-go/tools/cache.DeletedFinalStateUnknown];
//   - index functions, the transform and the cache convert by type, since
//     their shapes are the same;
//   - a watch error handler is given a client-go Reflector that names ours
//     but never runs (client-go's handler type takes its concrete Reflector);
//   - registrations answer HasSynced, HasSyncedChecker and ShutdownChan, so
//     client-go's [k8s.io/client-go/tools/cache.ShutDownEventHandler] and
//     [k8s.io/client-go/tools/cache.WaitFor] work on them.
//
// Two doors lead a controller onto it. With a client-go informer factory,
// ask for the type first through InformerFor (the first caller wins, and
// the generated accessors then hand out this informer). InformerFor's
// newFunc is given only the client and the resync period, not the
// factory's namespace and list-options tweak; a [FactoryScope] written once
// gives them to both, and [NewInformerFunc] builds the ListerWatcher the
// generated informer would:
//
//	scope := dropin.FactoryScope{Namespace: "prod", TweakListOptions: selectApp}
//	factory := informers.NewSharedInformerFactoryWithOptions(client, resync, scope.Options()...)
//	factory.InformerFor(&corev1.ConfigMap{}, dropin.NewInformerFunc(scope, &corev1.ConfigMap{},
//		func(c kubernetes.Interface, ns string) dropin.ListWatchClient[*corev1.ConfigMapList] { return c.CoreV1().ConfigMaps(ns) }))
//
// The generated accessors of client-go 1.37 return the informer wrapped in
// cache.TypedSharedIndexInformer; [InformerOf] finds ours behind it. The
// dynamic factory has no InformerFor: [NewDynamicInformer] makes the
// informers.GenericInformer its ForResource would, on ours.
//
// Build lw as client-go's generated informers build theirs, wrapped by
// cache.ToListWatcherWithWatchListSemantics(lw, c): on a fake clientset
// (k8s.io/client-go/kubernetes/fake) that tells our reflector, as it tells
// client-go's, that the client is a test double, which LISTs instead of
// streaming and whose watch events carry no resourceVersion
// (fakeclient_test.go runs a controller on it both ways).
//
// With controller-runtime, set cache.Options.NewInformer to
// [NewSharedIndexInformer], whose signature it is. Its read-your-writes
// (client.CacheOptions.EnableReadYourWritesConsistency) works on ours: it
// needs a registration's HasSyncedChecker and handler calls that come after
// the cache write, and util/consistency of kube-controller-manager needs the
// store's LastStoreSyncResourceVersion; readyourwrites_test.go asks both of
// client-go's informer and ours.
//
// A relist (a 410 on the watch, then the stream or a LIST again) holds no
// second copy of the cache, as client-go's does until its Replace (its
// heap doubles): each object that arrives with the UID and resourceVersion
// of the cached one is exchanged for the cached object at once (chapters 3
// to 5, "Differences from client-go"). The handler calls are client-go's,
// with equal contents; what a handler can tell is that an unchanged
// object's relist OnUpdate gets one pointer as old and new, where
// client-go's gets two equal copies. That relies on client-go's contract
// that handlers do not mutate the objects they are given, as the cache's
// sharing with listers already does.
//
// [StringTable], opt-in, is a transform that makes the cached objects share
// one copy of the strings they repeat (namespaces, labels, owners, images,
// managedFields' managers, …): a smaller steady heap for some CPU per
// event, with every object deep-equal to what it was (docs/scale.md, "One
// copy of what repeats"). Nothing is shared unless you set it.
//
// The informer traces with the global TracerProvider (otel.SetTracerProvider,
// even when set after the informer was built); [Informer.SetTracerProvider]
// and [Informer.SetTraceFilter] choose otherwise. With no provider set,
// tracing costs nothing measurable (see docs/performance.md).
//
// # The traced workqueue
//
// [NewTracedQueue] wraps a controller's workqueue (client-go's
// rate-limiting queue; [NewTracedRateLimitingQueueWithConfig] builds that
// queue from client-go's constructor's arguments and wraps it, handing the
// wrapper its rate limiter; [NewTracedDelayingQueue] and [NewTracedPlainQueue]
// wrap its delaying and plain queues, and the nested module dropin/crqueue
// controller-runtime's priority queue, keeping its AddWithOpts) and carries each object's trace on from the handler call to the
// reconcile: workqueue.add, workqueue.delayed (only with a delay),
// workqueue.queued and workqueue.process, as docs/span-contract.md's "After
// the handler" says. It forwards every call as it was made, but for a
// rate-limited add whose limiter it knows, which it hands inner as what
// inner would make of it (the limiter's When, then AddAfter: see
// [TracedQueue.AddRateLimited]), and decides nothing (of its own it only
// reads inner's ShuttingDown once it keeps its bookkeeping, and Len and
// NumRequeues while tracing is on); to tell which adds the workqueue merged it keeps the workqueue's own bookkeeping
// (dirty, processing, the delaying queue's one entry per key) beside it,
// from the moment something reads it (tracing on, the live view's handler
// made, a Stats call). [TracedQueue] says where it has to guess. It reports
// no metrics of its own: the queue it wraps reports its workqueue_*
// metrics through the provider it was given, as untraced.
//
// An add is the child of the handler call it was made in, though neither
// client-go's handler API nor its workqueue carries a context. Chapter 5
// tells a handler that asks (processor.CallSpanHandler) the span of each
// traced call; this package's adapter of your handler registers it for its
// goroutine, a traced Get registers its process span until Done, and Add
// looks up the calling goroutine (internal/handlerctx). The adapter
// registers only while a traced queue is alive in the process. The cost:
// with tracing off nothing is registered and the lookup is one atomic
// load; while nothing reads the queue, it adds to inner's work up to
// four checks per add (atomic loads, two of them with a type comparison:
// is its bookkeeping on, is a MeterProvider set, is tracing on, is the
// live view's handler made) and one atomic load per Get and Done.
// With tracing on, each registration and lookup finds the goroutine with a
// few instructions of assembly (amd64, arm64) and takes one of 64 locks,
// allocating nothing, sampled or not. A handler call whose change the
// informer left out of the traces (its root dropped by the sampler, or its
// object by the trace filter) is registered as untraced, and an add made
// in it makes no span, nor does the key's reconcile: ReconcileContext then
// gives a span context that is not sampled, so the reconcile's own spans
// are dropped too. A sampled trace is whole or absent (an add made outside
// any handler call or reconcile is a root, as before). Across controllers,
// [LinkAwareSampler] lets the writer's decision stand.
//
// Names in a trace: an informer with no Identifier and no description is
// named by its object's type as client-go's reflector describes it (an
// Unstructured's GVK); a handler as client-go names it, or by
// [NamedHandler], and controller-runtime's handlers by the handler their
// source.EventHandler wraps (docs/07-your-controller.md, "Names in the
// waterfall").
// [TracedQueue.Stats] counts adds, merged adds, retries and reconciles for
// a live view, tracing on or off, from the moment something reads.
//
// # Inside the reconcile, and on to the next controller
//
// [ReconcileContext] gives a reconcile's ctx the key's workqueue.process
// span, found the same way (the goroutine that called Get, until Done), so
// the reconcile's own spans hang under it. [StampTraceparent] writes that
// span on an object the reconcile is about to write, in the annotation
// tracing.k8s.io/traceparent (KEP-5915's draft): the informer of the next
// controller links the watch event of that write to it (chapter 4,
// docs/span-contract.md "From one controller to the next").
//
// # Metrics
//
// Every informer of this package reports client-go's informer metrics
// (informer_queued_items, informer_processing_latency_seconds,
// informer_store_resource_version) through the InformerMetricsProvider
// client-go would use (its options', else cache.SetInformerMetricsProvider's)
// under client-go's rules (a reserved Identifier only), and two per handler
// of ours through a [HandlerMetricsProvider] ([SetHandlerMetricsProvider];
// dropin/prometheus is the Prometheus one). A traced queue's workqueue_*
// metrics are its inner queue's. With component-base's Prometheus packages
// and dropin/prometheus imported, a controller on this package shows the
// series it shows on client-go's informer; [InformerMetricsProvider],
// [WorkqueueMetricsProvider] and [OTelHandlerMetricsProvider] are the
// OpenTelemetry route. docs/07-your-controller.md's "Metrics" lists them
// and how to serve them at /metrics.
//
// # The live view
//
// [LiveViewHandler] serves, on the caller's listener, the demo's live page
// for this process: every informer of this package and every traced queue
// alive in it (they join when built and leave when stopped), with the
// reflector's requests, the handlers' backlogs and times and the queues'
// counters, read-only, and plots of the numbers of their metrics over the
// last minutes (sampled only while a page is open). [LiveViewSpanProcessor],
// on the tracer provider, adds the recent events and reconciles and their
// waterfalls: why a reconcile ran. [LiveViewTraceOneKey], if the caller
// opts in, lets the page narrow the process's tracing to one object's key.
// docs/07-your-controller.md, "Live view in your process".
//
// The Example functions show it running; oracle_test.go runs it beside
// client-go's informer on one script and requires the same answers from
// every method; queue_test.go drives the traced queue beside client-go's
// and checks its spans against what client-go's queue reports through its
// metrics.
package dropin
