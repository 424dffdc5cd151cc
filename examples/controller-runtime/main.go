// Command controller-runtime runs a controller-runtime manager on this
// project's informer and traced workqueue: two options, set where the
// manager and the controller are made, and every reconcile's trace goes back
// through the workqueue and the handler to the watch event that caused it.
//
//	go run . --kubeconfig ~/.kube/config --exporter otlp   (from examples/controller-runtime)
//
// With --metrics-bind-address 127.0.0.1:8080, controller-runtime's metrics
// server also serves the live view of the manager's informers and the
// controller's queue (dropin.LiveViewHandler, through
// metricsserver.Options.ExtraHandlers) at
// http://127.0.0.1:8080/debug/informers/.
//
// It reconciles ConfigMaps labelled example.informer-anatomy.io/watch=true
// into "<name>-status" ConfigMaps, as the client-go example does. The
// manager's metrics server (--metrics-bind-address) serves
// controller-runtime's own metrics at /metrics, as without dropin: its
// workqueue_* metrics among them, which the traced queue's priority queue
// reports through controller-runtime's provider (labels name, controller
// and, on workqueue_depth, priority). Our informer_handler_* pair takes the
// OpenTelemetry route here: dropin.OTelHandlerMetricsProvider, read by an
// OpenTelemetry Prometheus exporter registered with controller-runtime's
// metrics.Registry. (controller-runtime's cache gives its informers no
// Identifier, so client-go's informer_* metrics are not published, on
// client-go's informer as on ours.)
//
// This is a module of its own (go.mod beside this file, with a replace of
// the main module): controller-runtime stays out of the main module's
// dependency graph, so nothing else in the project builds against it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/dropin/crqueue"
	"github.com/informer-anatomy/informer-anatomy/examples/internal/metricsetup"
	"github.com/informer-anatomy/informer-anatomy/examples/internal/otelsetup"
)

func main() {
	exporter := flag.String("exporter", "stdout", "where spans go: stdout, otlp (OTEL_EXPORTER_OTLP_ENDPOINT, default http://localhost:4318) or none")
	namespace := flag.String("namespace", "", "namespace to watch (default: all)")
	metricsAddr := flag.String("metrics-bind-address", "0", "the metrics server's address, which serves /metrics and the live view of the informers and queue at "+LiveViewPath+", e.g. 127.0.0.1:8080; 0: no server")
	// controller-runtime registers --kubeconfig itself (ctrl.GetConfig).
	flag.Parse()
	if err := run(ctrl.SetupSignalHandler(), *exporter, *namespace, *metricsAddr); err != nil {
		fmt.Fprintln(os.Stderr, "controller-runtime example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, exporter, namespace, metricsAddr string) error {
	installErrorHandler(os.Stderr)
	// With the metrics server on, the live view's span store gets the
	// spans too: its page lists the events and reconciles.
	var processors []sdktrace.SpanProcessor
	if metricsAddr != "0" {
		processors = append(processors, dropin.LiveViewSpanProcessor())
	}
	shutdown, err := otelsetup.Install(ctx, exporter, "controller-runtime-example", os.Stdout, processors...)
	if err != nil {
		return err
	}
	defer func() {
		flushCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = shutdown(flushCtx)
	}()
	stopMetrics, err := InstallHandlerMetrics()
	if err != nil {
		return err
	}
	defer func() { _ = stopMetrics(context.Background()) }()
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("no cluster configuration (pass --kubeconfig or set KUBECONFIG): %w", err)
	}
	// The reconcile's API requests join its trace (a CLIENT span each,
	// under workqueue.process, through dropin.ReconcileContext) with one
	// more line, which this example leaves out so as not to add
	// go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp to the
	// module's dependencies:
	//
	//	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return otelhttp.NewTransport(rt) })
	opts := ManagerOptions(namespace)
	opts.Metrics.BindAddress = metricsAddr
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return fmt.Errorf("making the manager: %w", err)
	}
	if _, err := Setup(mgr, nil); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "controller-runtime example: watching ConfigMaps labelled %s=true; Ctrl-C to stop\n", WatchLabel)
	if err := mgr.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// ManagerOptions are the manager's options with our informer: the one line
// that matters is NewInformer. Read-your-writes is on
// (client.CacheOptions.EnableReadYourWritesConsistency, controller-runtime
// v0.25, experimental): a read through the manager's client waits until the
// cache has seen this process's own earlier writes, which it learns from a
// handler on our informer and its registration's HasSyncedChecker.
func ManagerOptions(namespace string) manager.Options {
	opts := manager.Options{
		Cache: cache.Options{
			NewInformer: dropin.NewSharedIndexInformer,
		},
		Client: client.Options{
			Cache: &client.CacheOptions{EnableReadYourWritesConsistency: ptr.To(true)},
		},
		// No metrics or health endpoints by default: the example needs no
		// ports. Given an address (--metrics-bind-address), the metrics
		// server also serves the live view of the process's informers and
		// queues, read-only (dropin.LiveViewHandler).
		Metrics: metricsserver.Options{BindAddress: "0",
			ExtraHandlers:  map[string]http.Handler{LiveViewPath: dropin.LiveViewHandler()},
			FilterProvider: withDeadlines},
		HealthProbeBindAddress: "0",
	}
	if namespace != "" {
		opts.Cache.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	return opts
}

// installErrorHandler sends OpenTelemetry's errors (a failed export, a
// full span queue) to w as one short line each (otelsetup.ErrorHandler):
// OpenTelemetry's default handler logs a collector's whole answer, which
// can be megabytes, once per failed batch.
func installErrorHandler(w io.Writer) { otel.SetErrorHandler(otelsetup.ErrorHandler(w)) }

// The metrics server's per-request deadlines (withDeadlines). Variables so
// that a test can shorten them.
var (
	metricsReadTimeout  = 10 * time.Second
	metricsWriteTimeout = 30 * time.Second
)

// withDeadlines is the metrics server's FilterProvider: it gives every
// request to /metrics and to the live view a read deadline and a write
// deadline (http.ResponseController). controller-runtime builds the
// metrics server's http.Server itself (pkg/internal/httpserver: a
// ReadHeaderTimeout of 32 s and an IdleTimeout of 90 s, no ReadTimeout,
// no WriteTimeout) and lets no option set them; without a write deadline
// a client that never reads its answer holds a goroutine and a
// connection for good (issue 38: 800 such clients, 900 goroutines, 165
// MB). A scrape takes well under a second and the live view's answers are
// small: 30 s of writing is room for a slow link, not for a reader that
// stopped. A filter wraps /metrics and the extra handlers, which are all
// this server serves.
func withDeadlines(*rest.Config, *http.Client) (metricsserver.Filter, error) {
	return func(_ logr.Logger, h http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			now := time.Now()
			// A writer that cannot take deadlines (none of net/http's)
			// serves as before.
			_ = rc.SetReadDeadline(now.Add(metricsReadTimeout))
			_ = rc.SetWriteDeadline(now.Add(metricsWriteTimeout))
			h.ServeHTTP(w, r)
		}), nil
	}, nil
}

// LiveViewPath is where the metrics server serves the live view.
const LiveViewPath = "/debug/informers/"

// InstallHandlerMetrics puts our per-handler metrics on controller-runtime's
// metrics.Registry by the OpenTelemetry route: the handler metrics'
// provider (dropin.SetHandlerMetricsProvider, the first call wins) on
// OpenTelemetry instruments, and an OpenTelemetry Prometheus exporter on
// the registry (metricsetup). shutdown stops the MeterProvider.
func InstallHandlerMetrics() (shutdown func(context.Context) error, err error) {
	dropin.SetHandlerMetricsProvider(dropin.OTelHandlerMetricsProvider())
	return metricsetup.Install(ctrlmetrics.Registry)
}

// NewQueue is controller.Options.NewQueue: controller-runtime's own
// default, the priority queue with the controller's rate limiter, traced:
// crqueue.NewQueue. The traced queue is still a
// priorityqueue.PriorityQueue, so controller-runtime's handlers add the
// initial list and resyncs at low priority, behind live changes, as
// without the wrapper. crqueue.NewQueue hands the wrapper the rate limiter
// it builds the queue with, so a failed reconcile's requeue shows the
// limiter's delay as its workqueue.delayed, not a guess (what
// crqueue.NewTracedPriorityQueue around a priorityqueue.New of our own
// would do). The priority queue reports its workqueue_* metrics through
// controller-runtime's own provider, as controller-runtime's default
// queue does; the traced queue reports none of its own.
func NewQueue(controllerName string, rateLimiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return crqueue.NewQueue(controllerName, rateLimiter)
}

// NewManager makes the manager for cfg with ManagerOptions.
func NewManager(cfg *rest.Config, namespace string) (manager.Manager, error) {
	mgr, err := ctrl.NewManager(cfg, ManagerOptions(namespace))
	if err != nil {
		return nil, fmt.Errorf("making the manager: %w", err)
	}
	return mgr, nil
}
