package dropin_test

import (
	"net/http"
	"net/http/httputil"
	"net/url"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/informer-anatomy/informer-anatomy/dropin"
)

// The live view of your own controller on your own mux, with its event
// list and its "why did this run" fed by your tracer provider.
func ExampleLiveViewHandler() {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(dropin.LiveViewSpanProcessor()))
	_ = tp // give it to your informers and queues (SetTracerProvider), or otel.SetTracerProvider(tp)

	mux := http.NewServeMux()
	mux.Handle("/debug/informers/", dropin.LiveViewHandler())
	_ = http.ListenAndServe // serve mux on your listener: the page is at /debug/informers/
}

// liveViewProxy keeps the live view's DNS-rebinding check: SetURL set
// the controller's address as Host, the browser's is put back.
func liveViewProxy(controller *url.URL) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(controller)
		r.Out.Host = r.In.Host // keep the client's Host: the live view checks it
	}}
}

// The live view behind a reverse proxy of your own, opened on this
// machine as http://localhost:9000/debug/informers/.
func ExampleLiveViewHandler_behindAProxy() {
	controller, _ := url.Parse("http://10.0.0.5:8080") // where the controller serves the live view
	_ = http.ListenAndServe("127.0.0.1:9000", liveViewProxy(controller))
}
