// Command clientgo-controller runs the controller of package controller, a
// client-go controller in the sample-controller style, on this project's
// informer and traced workqueue, so that each ConfigMap's path from the
// watch through the handler and the workqueue to the reconcile is one
// trace.
//
//	go run ./examples/clientgo-controller --kubeconfig ~/.kube/config --exporter otlp
//	kubectl create configmap demo --from-literal=a=1
//	kubectl label configmap demo example.informer-anatomy.io/watch=true
//	kubectl get configmap demo-status -o yaml
//
// With --live-view-addr 127.0.0.1:8089 it also serves the live view of its
// informer and queue (dropin.LiveViewHandler) at
// http://127.0.0.1:8089/debug/informers/.
//
// The one line that puts our informer in is controller.UseDropinInformer;
// everything else is what a client-go controller always does. Metrics are
// turned on as for client-go's informer: component-base's Prometheus
// packages imported (and ours, for the per-handler pair), the factory
// given an informer name, and legacyregistry served at /metrics
// (--metrics-bind-address, e.g. 127.0.0.1:8080): client-go's informer_*
// and workqueue_*, and our informer_handler_*.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/metrics/legacyregistry"

	// The metrics, as for client-go's informer: component-base's providers
	// of client-go's informer_* and workqueue_* metrics, and dropin's of
	// the per-handler pair, all on legacyregistry.
	_ "k8s.io/component-base/metrics/prometheus/clientgo/fifo"
	_ "k8s.io/component-base/metrics/prometheus/workqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	_ "github.com/informer-anatomy/informer-anatomy/dropin/prometheus"
	"github.com/informer-anatomy/informer-anatomy/examples/clientgo-controller/controller"
	"github.com/informer-anatomy/informer-anatomy/examples/internal/otelsetup"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "clientgo-controller:", err)
		os.Exit(1)
	}
}

func run() error {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file (default $KUBECONFIG; empty: in-cluster)")
	namespace := flag.String("namespace", "", "namespace to watch (default: all)")
	exporter := flag.String("exporter", "stdout", "where spans go: stdout, otlp (OTEL_EXPORTER_OTLP_ENDPOINT, default http://localhost:4318) or none")
	workers := flag.Int("workers", 2, "reconcile workers")
	metricsAddr := flag.String("metrics-bind-address", "0", "serve /metrics on this address, e.g. 127.0.0.1:8080; 0: not served")
	liveAddr := flag.String("live-view-addr", "", "serve the live view of this controller's informers and queue on this address, e.g. 127.0.0.1:8089 (page at "+liveViewPath+"); empty: none")
	flag.Parse()

	// Ctrl-C (or SIGTERM) cancels ctx; a second one exits at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // the next signal kills the process the default way
	}()

	installErrorHandler(os.Stderr)

	// The live view's span store gets the spans too: its page lists the
	// events and reconciles and opens their traces.
	var processors []sdktrace.SpanProcessor
	if *liveAddr != "" {
		processors = append(processors, dropin.LiveViewSpanProcessor())
	}
	shutdown, err := otelsetup.Install(ctx, *exporter, "clientgo-controller", os.Stdout, processors...)
	if err != nil {
		return err
	}
	defer func() {
		flushCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = shutdown(flushCtx)
	}()

	if *metricsAddr != "0" {
		_, stopMetrics, err := serveMetrics(*metricsAddr)
		if err != nil {
			return err
		}
		defer stopMetrics()
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fmt.Errorf("reading the kubeconfig (pass --kubeconfig or set KUBECONFIG): %w", err)
	}
	// The reconcile's API requests join its trace (a CLIENT span each,
	// under workqueue.process, through dropin.ReconcileContext) with one
	// more line, which this example leaves out so as not to add
	// go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp to the
	// module's dependencies:
	//
	//	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return otelhttp.NewTransport(rt) })
	//
	// The informer's own list and watch requests go through it too, each a
	// trace of its own.
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	scope, err := newScope(*namespace)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 10*time.Minute, scope.Options()...)
	controller.UseDropinInformer(factory, scope)
	c, err := controller.New(client, factory.Core().V1().ConfigMaps())
	if err != nil {
		return err
	}
	if *liveAddr != "" {
		url, wait, err := serveLiveView(ctx, *liveAddr)
		if err != nil {
			return err
		}
		defer wait()
		fmt.Fprintf(os.Stderr, "clientgo-controller: live view at %s\n", url)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	fmt.Fprintf(os.Stderr, "clientgo-controller: watching ConfigMaps labelled %s=true; Ctrl-C to stop\n", controller.WatchLabel)
	if err := c.Run(ctx, *workers); err != nil && !errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("%w (is the cluster reachable, and may this user list and watch configmaps?)", err)
	}
	return nil
}

// informerName names the factory's informers in their metrics.
const informerName = "clientgo-controller"

// newScope is the factory's scope: namespace, and the informer name
// (informers.WithInformerName, through scope.Options) that client-go's
// informer metrics are published under: an informer without one reports
// none, on client-go's informer as on ours. The factory's Shutdown
// releases the name.
func newScope(namespace string) (dropin.FactoryScope, error) {
	name, err := cache.NewInformerName(informerName)
	if err != nil {
		return dropin.FactoryScope{}, err
	}
	return dropin.FactoryScope{Namespace: namespace, InformerName: name}, nil
}

// serveMetrics serves legacyregistry, where the imported providers
// register, at addr's /metrics until stop; bound is the address it
// listens on.
func serveMetrics(addr string) (bound string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("serving /metrics (--metrics-bind-address %s): %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", legacyregistry.Handler())
	srv := newServer(mux)
	go func() { _ = srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "clientgo-controller: metrics at http://%s/metrics\n", ln.Addr())
	return ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// installErrorHandler sends OpenTelemetry's errors (a failed export, a
// full span queue) to w as one short line each (otelsetup.ErrorHandler):
// OpenTelemetry's default handler logs a collector's whole answer, which
// can be megabytes, once per failed batch.
func installErrorHandler(w io.Writer) { otel.SetErrorHandler(otelsetup.ErrorHandler(w)) }

// newServer is every HTTP server of this example (/metrics, the live
// view): one that a client cannot hold. Without ReadHeaderTimeout and
// ReadTimeout a client that sends its request a byte a minute keeps a
// goroutine and a connection; without WriteTimeout one that never reads
// the answer does (800 such clients held 900 goroutines and 165 MB);
// without IdleTimeout a kept-alive connection stays open for good. The
// live view's page polls every 200 ms, each answer small, and a scrape of
// /metrics takes well under a second: 30 s of writing is room for a slow
// link, not for a reader that stopped.
func newServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
}
