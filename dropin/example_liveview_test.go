package dropin_test

import (
	"net/http"

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
