package cluster

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	factory "github.com/informer-anatomy/informer-anatomy/chapters/06-factory"
	"github.com/informer-anatomy/informer-anatomy/demo"
	"github.com/informer-anatomy/informer-anatomy/demo/informers"
	"github.com/informer-anatomy/informer-anatomy/demo/liveview"
	"github.com/informer-anatomy/informer-anatomy/demo/result"
	"github.com/informer-anatomy/informer-anatomy/demo/telemetry"
	"github.com/informer-anatomy/informer-anatomy/demo/terminal"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
	"github.com/informer-anatomy/informer-anatomy/liveprobe"
)

// Options are a cluster run's: the command line's cluster flags, and what
// the rest of the run hands over.
type Options struct {
	Kubeconfig, Context string // --kubeconfig, --context
	Namespace           string // --namespace ("": all)
	Resource            string // --resource ("": pods, or configmaps with Generate)
	Generate            bool   // --generate
	Duration            time.Duration
	Queue               string // --queue
	Objects             int    // --objects: how many objects to draw
	TraceFilter         deltafifo.TraceFilter
	// Live is the run's live view, nil without --ui.
	Live *liveview.Session
	// SyncTimeout bounds the wait for the informer's first sync (0: a
	// minute).
	SyncTimeout time.Duration
	// OnSynced, if set, is given the informer's store once it has synced
	// (tests).
	OnSynced func(store.Store)
}

const (
	// preflightTimeout bounds the first LIST and WATCH, which tell an
	// unreachable, misconfigured or forbidden cluster apart before the
	// informer starts (whose reflector would retry such errors forever).
	preflightTimeout = 10 * time.Second
	clusterSlowDelay = time.Millisecond
	generateRounds   = 5
)

// interruptedCatchUp is how long, after Ctrl-C, the handlers are given to
// catch up with the cache before the informer stops.
const interruptedCatchUp = time.Second

// defaultSyncTimeout bounds the wait for the informer's first sync.
const defaultSyncTimeout = 60 * time.Second

// knownResources maps the names a user types to a GroupVersionResource;
// anything else is given as group/version/resource (or version/resource for
// the core group).
var knownResources = map[string]schema.GroupVersionResource{
	"pods":         {Version: "v1", Resource: "pods"},
	"configmaps":   {Version: "v1", Resource: "configmaps"},
	"endpoints":    {Version: "v1", Resource: "endpoints"},
	"services":     {Version: "v1", Resource: "services"},
	"secrets":      {Version: "v1", Resource: "secrets"},
	"nodes":        {Version: "v1", Resource: "nodes"},
	"namespaces":   {Version: "v1", Resource: "namespaces"},
	"events":       {Version: "v1", Resource: "events"},
	"deployments":  {Group: "apps", Version: "v1", Resource: "deployments"},
	"replicasets":  {Group: "apps", Version: "v1", Resource: "replicasets"},
	"statefulsets": {Group: "apps", Version: "v1", Resource: "statefulsets"},
	"daemonsets":   {Group: "apps", Version: "v1", Resource: "daemonsets"},
}

// ParseResource reads --resource: a name the demo knows (pods,
// deployments, ...), or group/version/resource (version/resource for the
// core group); anything else is an error that lists the names and says
// how to find a resource's group and version.
func ParseResource(s string) (schema.GroupVersionResource, error) {
	if gvr, ok := knownResources[strings.ToLower(s)]; ok {
		return gvr, nil
	}
	parts := strings.Split(s, "/")
	switch {
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		return schema.GroupVersionResource{Version: parts[0], Resource: parts[1]}, nil
	case len(parts) == 3 && parts[0] != "" && parts[1] != "" && parts[2] != "":
		return schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}, nil
	}
	return schema.GroupVersionResource{}, fmt.Errorf("--resource %q: not a name the demo knows (%s); give group/version/resource instead, e.g. apps/v1/deployments or v1/pods (kubectl api-resources lists them)",
		s, strings.Join(slices.Sorted(maps.Keys(knownResources)), ", "))
}

// loadConfig finds the cluster as kubectl does: --kubeconfig, else
// KUBECONFIG, else ~/.kube/config, else the in-cluster service account.
func loadConfig(o Options) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.Context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, "", errors.New("no cluster configured: no kubeconfig was found (KUBECONFIG, ~/.kube/config) and this is not a pod; pass --kubeconfig, or run without --cluster for the embedded server")
		}
		return nil, "", fmt.Errorf("reading the kubeconfig: %v; check --kubeconfig and --context (kubectl config get-contexts)", err)
	}
	where := cfg.Host
	if raw, err := cc.RawConfig(); err == nil {
		ctx := raw.CurrentContext
		if o.Context != "" {
			ctx = o.Context
		}
		if ctx != "" {
			where = fmt.Sprintf("%s (context %s)", cfg.Host, ctx)
		}
	}
	return cfg, where, nil
}

// explain turns an error from the API server or the network into one line
// that says what happened and what to do. ctx is the run's: an error that
// comes from the user stopping the run (Ctrl-C, or --duration's end) says
// so, not that the cluster may be down. The API server's own message is
// kept (as a typed client's and, through internal/kube, an unstructured
// client's errors carry it); server text is made safe for a terminal
// where it is printed (terminal.Safe).
func explain(ctx context.Context, err error, where string, gvr schema.GroupVersionResource, namespace, verb string) error {
	ns := "all namespaces"
	nsFlag := "-A"
	if namespace != "" {
		ns, nsFlag = "namespace "+namespace, "-n "+namespace
	}
	what := gvr.Resource
	if gvr.Group != "" {
		what += "." + gvr.Group
	}
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		recordHeader     tls.RecordHeaderError
		netErr           net.Error
		dnsErr           *net.DNSError
		urlErr           *url.Error
		certVerify       *tls.CertificateVerificationError
		status           apierrors.APIStatus
	)
	if ctx.Err() != nil && !errors.As(err, &status) {
		why := "Ctrl-C"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			why = "--duration ended"
		}
		return fmt.Errorf("stopped (%s) before the API server at %s answered the %s of %s in %s", why, where, verb, what, ns)
	}
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("forbidden: the API server at %s does not allow you to %s %s in %s. An informer needs list and watch: check with `kubectl auth can-i %s %s %s`, ask for a Role/ClusterRole that grants them, or pick another --namespace/--resource. The server said: %v",
			where, verb, what, ns, verb, what, nsFlag, err)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("unauthorized: the API server at %s rejected this kubeconfig's credentials (expired token or certificate?); log in again or choose another --context. The server said: %v", where, err)
	case apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err):
		return fmt.Errorf("unknown resource: the API server at %s has no %s in %s (or cannot %s it); `kubectl api-resources` lists what it serves, give it as --resource group/version/resource. The server said: %v",
			where, gvr.Resource, gvr.GroupVersion(), verb, err)
	case errors.As(err, &status):
		return fmt.Errorf("the API server at %s failed to %s %s in %s (HTTP %d): %v", where, verb, what, ns, status.Status().Code, err)
	case errors.As(err, &unknownAuthority), errors.As(err, &hostname), errors.As(err, &invalid), errors.As(err, &certVerify):
		return fmt.Errorf("TLS: the certificate of the API server at %s is not trusted by this kubeconfig (wrong certificate-authority, or the wrong server address): %v", where, err)
	case errors.As(err, &recordHeader) || strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return fmt.Errorf("TLS: %s does not speak HTTPS; fix the server URL (http:// vs https://) in the kubeconfig: %v", where, err)
	case utilnet.IsConnectionRefused(err):
		return fmt.Errorf("cannot reach the API server at %s: nothing accepts connections there (connection refused). Is the cluster running, and is this the right --context? (kubectl cluster-info)", where)
	case errors.As(err, &dnsErr):
		return fmt.Errorf("cannot reach the API server at %s: its host name does not resolve (%v); check the server URL in the kubeconfig, or --context", where, err)
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return fmt.Errorf("the API server at %s did not answer the %s of %s within %v: %v. Is the cluster running and is this the right --context? (kubectl cluster-info)", where, verb, what, preflightTimeout, err)
	case errors.As(err, &netErr) || errors.As(err, &urlErr):
		return fmt.Errorf("cannot reach the API server at %s: %v. Is the cluster running and is this the right --context? (kubectl cluster-info)", where, err)
	}
	return fmt.Errorf("%s %s in %s at %s failed: %v", verb, what, ns, where, err)
}

// preflight sends one small LIST and one short WATCH, the two verbs the
// informer needs (it streams its initial state with a WATCH, and LISTs
// where the server cannot stream), so that a cluster the informer cannot
// use fails now with a reason, not later in a reflector retrying in the
// background.
func preflight(ctx context.Context, rc rest.Interface, gvr schema.GroupVersionResource, namespace, where string) error {
	pctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	err := rc.Get().Namespace(namespace).Resource(gvr.Resource).
		VersionedParams(&metav1.ListOptions{Limit: 1}, metav1.ParameterCodec).Do(pctx).Error()
	if err != nil {
		return explain(ctx, err, where, gvr, namespace, "list")
	}
	timeout := int64(1)
	w, err := rc.Get().Namespace(namespace).Resource(gvr.Resource).
		VersionedParams(&metav1.ListOptions{Watch: true, TimeoutSeconds: &timeout}, metav1.ParameterCodec).Watch(pctx)
	if err != nil {
		return explain(ctx, err, where, gvr, namespace, "watch")
	}
	w.Stop()
	return nil
}

// Run watches a real cluster, found by kubeconfig loading rules, with the
// demo's informer and handlers, optionally making its own traffic
// (Generate); it stops at ctx's end (Ctrl-C or --duration), once the
// handlers have caught up with the cache, and returns the objects to draw.
func Run(ctx context.Context, o Options, u *terminal.Printer, tel *telemetry.Telemetry) (result.Result, error) {
	r := &run{o: o, u: u, tel: tel}
	if err := r.connect(); err != nil {
		return result.Result{}, err
	}
	if o.Generate {
		r.gen = &generator{core: r.core, ns: fmt.Sprintf("trace-demo-%05d", rand.IntN(100000))}
		if err := r.gen.createNamespace(ctx); err != nil {
			return result.Result{}, explain(ctx, err, r.where, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", "create")
		}
		defer r.gen.cleanup(u)
		r.namespace = r.gen.ns
	}
	if err := preflight(ctx, r.rc, r.gvr, r.namespace, r.where); err != nil {
		return result.Result{}, err
	}
	if err := r.buildInformer(ctx); err != nil {
		return result.Result{}, err
	}
	// The informer has a context of its own: Ctrl-C (ctx) first lets the
	// handlers catch up with the cache, so the waterfall shows whole paths,
	// and only then stops the informer.
	infCtx, stopInformer := context.WithCancel(context.Background())
	defer func() { stopInformer(); r.factory.Shutdown() }()
	r.factory.Start(infCtx.Done())
	if err := r.waitForSync(ctx); err != nil {
		return result.Result{}, err
	}
	if err := r.workload(ctx); err != nil {
		return result.Result{}, err
	}
	r.catchUp(ctx)
	stopInformer()
	r.factory.Shutdown()
	return result.Result{Show: pickObjects(tel.Collector, o.Objects), HandlerCalls: r.handlers.Calls()}, nil
}

// run is one cluster run, filled in step by step.
type run struct {
	o   Options
	u   *terminal.Printer
	tel *telemetry.Telemetry

	// connect's:
	where     string // the server, and the kubeconfig context, for messages
	gvr       schema.GroupVersionResource
	client    *factory.Client
	rc        rest.Interface // gvr's unstructured client, for the preflight
	core      rest.Interface
	namespace string
	gen       *generator // with Generate

	// buildInformer's:
	factory  factory.SharedInformerFactory
	informer processor.SharedIndexInformer
	handlers *demo.Handlers
	lastErr  lastError
}

// connect loads the kubeconfig, works out the resource and makes the
// clients.
func (r *run) connect() error {
	o := r.o
	cfg, where, err := loadConfig(o)
	if err != nil {
		return err
	}
	r.where, r.namespace = where, o.Namespace
	resource := o.Resource
	if resource == "" {
		resource = "pods"
		if o.Generate {
			resource = "configmaps"
		}
	}
	if r.gvr, err = ParseResource(resource); err != nil {
		return err
	}
	if o.Generate && r.gvr != knownResources["configmaps"] {
		return fmt.Errorf("--generate makes ConfigMaps; drop --resource %s or set it to configmaps", resource)
	}
	if r.client, err = factory.NewForConfig(cfg); err != nil {
		return fmt.Errorf("client for %s: %w", where, err)
	}
	if r.rc, err = r.client.UnstructuredClient(r.gvr.GroupVersion()); err != nil {
		return fmt.Errorf("client for %s: %w", where, err)
	}
	r.core, _ = r.client.RESTClient(corev1.SchemeGroupVersion)
	return nil
}

// buildInformer makes the factory and the informer, with the demo's
// handlers and a watch error handler that explains what the reflector
// retries, and attaches it to the live view.
func (r *run) buildInformer(ctx context.Context) error {
	o := r.o
	nsText := "all namespaces"
	if r.namespace != "" {
		nsText = "namespace " + r.namespace
	}
	r.u.Status("cluster %s: %s in %s; queue %s", r.where, r.gvr.Resource, nsText, o.Queue)
	r.factory = factory.NewSharedInformerFactoryWithOptions(r.client, 0, factory.WithNamespace(r.namespace), factory.WithTracerProvider(r.tel.TP))
	var probe *liveprobe.ReflectorProbe
	var bytes *liveprobe.CacheBytes
	if q := informers.QueueKind(o.Queue); o.Live != nil || q != processor.RealFIFOQueue || o.TraceFilter != nil {
		// The page's reflector box needs a probe around the ListerWatcher,
		// another queue than the RealFIFO and a trace filter an informer
		// the demo builds; the factory's own takes none of them.
		var err error
		if o.Live != nil {
			bytes = &liveprobe.CacheBytes{} // the page shows what the cache holds
		}
		if r.informer, probe, err = informers.For(r.factory, r.client, informers.Spec{Resource: r.gvr, Namespace: r.namespace, Queue: q, TracerProvider: r.tel.TP, TraceFilter: o.TraceFilter, Bytes: bytes}); err != nil {
			return err
		}
	} else {
		gi, err := r.factory.ForResource(r.gvr)
		if err != nil {
			return err
		}
		r.informer = gi.Informer()
	}
	// The reflector retries list and watch errors by itself; show them, so
	// that a cluster that goes away mid-run is not a silent stall. The
	// reflector says which request failed ("failed to list …" or "failed to
	// watch …"): the explanation and its kubectl hint name that verb.
	// Each report is printed once: a forbidden or unauthorized request
	// (which no retry cures) ends the run with it, and a report that only
	// repeats the one before (the reflector retrying a server that keeps
	// failing) is not printed again. Reports once the user has stopped
	// the run are the informer being stopped, not trouble.
	_ = r.informer.SetWatchErrorHandler(func(_ *reflector.Reflector, err error) {
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) || ctx.Err() != nil {
			return
		}
		e := explain(ctx, err, r.where, r.gvr, r.namespace, failedVerb(err))
		if fatal, repeated := r.lastErr.set(e, err); !fatal && !repeated {
			r.u.Warn("%v (the informer retries)", e)
		}
	})
	r.handlers = demo.NewHandlers(clusterSlowDelay)
	if err := r.handlers.AddTo(r.informer); err != nil {
		return err
	}
	if o.Live != nil {
		o.Live.Attach(r.informer, probe, bytes, r.gvr.Resource+" in "+nsText, "cluster "+r.where+"; queue "+o.Queue, nil)
	}
	return nil
}

// waitForSync waits for the informer's first sync, but not on an error no
// retry will cure.
func (r *run) waitForSync(ctx context.Context) error {
	syncTimeout := cmp.Or(r.o.SyncTimeout, defaultSyncTimeout)
	inf, u, tel, gvr, where, o := r.informer, r.u, r.tel, r.gvr, r.where, r.o
	// A LIST or WATCH that RBAC forbids, or credentials the server
	// rejects, fail the run at once with the reflector's own reason.
	syncCtx, stopSync := context.WithTimeout(ctx, syncTimeout)
	defer stopSync()
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-syncCtx.Done():
				return
			case <-t.C:
				if r.lastErr.isFatal() {
					stopSync()
					return
				}
			}
		}
	}()
	for _, ok := range r.factory.WaitForCacheSync(syncCtx.Done()) {
		if ok {
			continue
		}
		if e, fatal := r.lastErr.get(); fatal {
			return e
		}
		if ctx.Err() != nil {
			return errors.New("stopped before the informer synced")
		}
		if e, _ := r.lastErr.get(); e != nil {
			// Not fatal, so printed as a warning already.
			return fmt.Errorf("the %s informer did not sync within %v: its requests kept failing, as the warning above says", gvr.Resource, syncTimeout)
		}
		return fmt.Errorf("the %s informer did not sync within %v, and no error was reported: the API server at %s answered the preflight LIST and WATCH, then %s; if the resource holds many objects, give it longer (trace-demo --sync-timeout 5m); else, is the server overloaded or stuck? (kubectl get --raw /readyz)",
			gvr.Resource, syncTimeout, where, lastSeen(tel.Collector, inf.GetStore().ListKeys()))
	}
	u.Status("synced: %s in the cache", terminal.Plural(len(inf.GetStore().ListKeys()), "object"))
	if o.OnSynced != nil {
		o.OnSynced(inf.GetStore())
	}
	return nil
}

// workload makes the generator's changes and waits for the handlers to
// see them, or just watches, until ctx ends (with Generate and no
// --duration: when the changes are seen).
func (r *run) workload(ctx context.Context) error {
	gen, u, o, gvr, namespace, where, handlers := r.gen, r.u, r.o, r.gvr, r.namespace, r.where, r.handlers
	if gen != nil {
		u.Lesson("generate", fmt.Sprintf("%d rounds in %s: create a ConfigMap, update it twice in a row, delete the previous one.", generateRounds, gen.ns))
		if err := gen.run(ctx); err != nil && ctx.Err() == nil {
			return explain(ctx, err, where, gvr, namespace, "create")
		}
		if ctx.Err() == nil {
			if err := demo.Until(ctx, "the generated changes to reach the handlers", func() bool {
				want, err := gen.serverState(ctx)
				return err == nil && maps.Equal(handlers.Seen(), want)
			}); err != nil && ctx.Err() == nil {
				return err
			}
		}
		if o.Duration > 0 {
			<-ctx.Done()
		}
	} else {
		if o.Duration > 0 {
			u.Status("watching for %v (Ctrl-C stops sooner)", o.Duration)
		} else {
			u.Status("watching; Ctrl-C stops and draws the waterfall")
		}
		<-ctx.Done()
	}
	return nil
}

// catchUp gives the handlers time to catch up with the cache before the
// informer stops.
func (r *run) catchUp(ctx context.Context) {
	inf, u, handlers := r.informer, r.u, r.handlers
	// After Ctrl-C the user is waiting: the handlers get a moment, not
	// the 20 s of any other wait (--duration's end waits for them).
	catchUp := context.Background()
	if errors.Is(ctx.Err(), context.Canceled) {
		var cancel context.CancelFunc
		catchUp, cancel = context.WithTimeout(catchUp, interruptedCatchUp)
		defer cancel()
	}
	if err := demo.Until(catchUp, "every handler to catch up with the cache", func() bool {
		want := map[string]string{}
		for _, obj := range inf.GetStore().List() {
			k, rv := demo.KeyAndRV(obj)
			want[k] = rv
		}
		return handlers.CaughtUp(want)
	}); err != nil {
		u.Warn("stopping with notifications still queued for a handler: %v", err)
	}
}

// failedVerb is the request an error from the reflector is about: it says
// "failed to list …" for a LIST and "failed to watch …" for a WATCH.
func failedVerb(err error) string {
	if strings.Contains(err.Error(), "failed to list") {
		return "list"
	}
	return "watch"
}

// lastError keeps the latest error the reflector reported, explained.
type lastError struct {
	mu    sync.Mutex
	err   error // guarded by mu: the explained error
	fatal bool  // guarded by mu: forbidden or unauthorized, which retries do not cure
}

// set keeps explained (raw is the reflector's error) and says whether it is
// fatal, and whether it repeats the report before it word for word.
func (l *lastError) set(explained, raw error) (fatal, repeated bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	repeated = l.err != nil && l.err.Error() == explained.Error()
	l.err = explained
	l.fatal = apierrors.IsForbidden(raw) || apierrors.IsUnauthorized(raw)
	return l.fatal, repeated
}

func (l *lastError) get() (error, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err, l.fatal
}

func (l *lastError) isFatal() bool {
	_, f := l.get()
	return f
}

// lastSeen says how far the informer got, from its spans and its cache.
func lastSeen(c *telemetry.Collector, cached []string) string {
	spans, _ := c.Snapshot()
	if len(spans) == 0 && len(cached) == 0 {
		return "the informer's own first request (its stream, or the LIST where the server cannot stream) got no answer: no span ended and no object arrived"
	}
	last := spans[0]
	for _, s := range spans[1:] {
		if s.End.After(last.End) {
			last = s
		}
	}
	return fmt.Sprintf("%s arrived in the cache and the last span to end was %q, %v before the demo gave up",
		terminal.Plural(len(cached), "object"), last.Name, time.Since(last.End).Round(time.Millisecond))
}

// pickObjects chooses what the waterfall draws on a cluster: for up to n
// objects, preferring ones that changed while watched, each trace in turn.
func pickObjects(c *telemetry.Collector, n int) []result.Showcase {
	spans, _ := c.Snapshot()
	ix := spancheck.NewIndex(spans)
	watched, listed := []string{}, []string{}
	seen := map[string]bool{}
	for _, r := range ix.Roots {
		k := r.Attr(tracing.KeyObjectKey)
		if k == "" || seen[k] || !strings.HasPrefix(r.Name, tracing.SpanRootPrefix) {
			continue
		}
		seen[k] = true
		if r.Name == "ListAndWatch watch" {
			watched = append(watched, k)
		} else {
			listed = append(listed, k)
		}
	}
	keys := append(watched, listed...)
	keys = keys[:min(n, len(keys))]
	// Per object, up to three traces, one of each kind of event first (an
	// ADDED, a MODIFIED and a DELETED say more than three MODIFIEDs).
	const perObject = 3
	var out []result.Showcase
	for _, k := range keys {
		var first, rest []*spancheck.Span
		kinds := map[string]bool{}
		for _, r := range ix.Roots {
			if r.Attr(tracing.KeyObjectKey) != k {
				continue
			}
			if ev := r.Name + r.Attr(tracing.KeyEventType); !kinds[ev] {
				kinds[ev] = true
				first = append(first, r)
			} else {
				rest = append(rest, r)
			}
		}
		picked := append(first, rest...)
		picked = picked[:min(perObject, len(picked))]
		slices.SortFunc(picked, func(a, b *spancheck.Span) int { return a.Start.Compare(b.Start) })
		for _, r := range picked {
			id := r.SpanID
			out = append(out, result.Show(fmt.Sprintf("%s %s", r.Name, r.Attr(tracing.KeyEventType)), k,
				func(s *spancheck.Span) bool { return s.SpanID == id }))
		}
	}
	return out
}

// generator makes traffic in a namespace of its own.
type generator struct {
	core rest.Interface
	ns   string
}

func (g *generator) createNamespace(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	return g.core.Post().Resource("namespaces").Body(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: g.ns}}).Do(ctx).Error()
}

func (g *generator) run(ctx context.Context) error {
	for i := range generateRounds {
		name := fmt.Sprintf("gen-%d", i)
		cm := &corev1.ConfigMap{}
		err := g.core.Post().Namespace(g.ns).Resource("configmaps").
			Body(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": "0"}}).Do(ctx).Into(cm)
		if err != nil {
			return err
		}
		for v := 1; v <= 2; v++ {
			cm.Data["v"] = fmt.Sprint(v)
			if err := g.core.Put().Namespace(g.ns).Resource("configmaps").Name(name).Body(cm).Do(ctx).Into(cm); err != nil {
				return err
			}
		}
		if i > 0 {
			if err := g.core.Delete().Namespace(g.ns).Resource("configmaps").Name(fmt.Sprintf("gen-%d", i-1)).Do(ctx).Error(); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

// serverState is key → resourceVersion of every ConfigMap in the namespace
// (including ones the cluster adds itself, such as kube-root-ca.crt).
func (g *generator) serverState(ctx context.Context) (map[string]string, error) {
	list := &corev1.ConfigMapList{}
	if err := g.core.Get().Namespace(g.ns).Resource("configmaps").Do(ctx).Into(list); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, cm := range list.Items {
		out[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
	}
	return out, nil
}

// cleanup deletes the namespace, also after Ctrl-C (on a fresh context).
func (g *generator) cleanup(u *terminal.Printer) {
	ctx, cancel := context.WithTimeout(context.Background(), preflightTimeout)
	defer cancel()
	if err := g.core.Delete().Resource("namespaces").Name(g.ns).Do(ctx).Error(); err != nil && !apierrors.IsNotFound(err) {
		u.Warn("could not delete namespace %s: %v; delete it with `kubectl delete namespace %s`", g.ns, err, g.ns)
		return
	}
	u.Status("deleted namespace %s", g.ns)
}
