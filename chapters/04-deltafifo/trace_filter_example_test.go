package deltafifo_test

import (
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
)

// With a TraceFilter, only the selected objects' deltas get a trace; the
// others are queued and popped exactly as before, untraced.
func ExampleTraceKeys() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	q := deltafifo.NewRealFIFOWithOptions(deltafifo.RealFIFOOptions{
		AtomicEvents:   true,
		TracerProvider: tp,
		TraceFilter:    deltafifo.TraceKeys("prod/web"),
	})
	for _, name := range []string{"web", "db", "cache"} {
		_ = q.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: name}})
	}
	for range 3 {
		_, _ = q.Pop(func(obj any, _ bool) error {
			fmt.Println("popped", obj.(deltafifo.Deltas)[0].Object.(*corev1.Pod).Name)
			return nil
		})
	}
	for _, s := range rec.Ended() {
		for _, a := range s.Attributes() {
			if a.Key == "informer.object.key" {
				fmt.Println("span", s.Name(), a.Value.String())
			}
		}
	}
	// Output:
	// popped web
	// popped db
	// popped cache
	// span ListAndWatch watch prod/web
	// span RealFIFO.queued prod/web
}
