package processor

import (
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/internal/informerbench"
)

// callRecorder is a CallSpanHandler that records, for each handler call,
// what EnterCall told it: "traced" (a valid span context, which must be
// the span the call runs in), "untraced" (the invalid one) or "none" (not
// called). It also counts exits, which must match the enters.
type callRecorder struct {
	mu            sync.Mutex
	entered       map[string]string // key -> what the call was told
	current       string            // set by EnterCall, read by the call
	enters, exits int
}

func (c *callRecorder) EnterCall(sc trace.SpanContext) func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.enters++
	c.current = "untraced"
	if sc.IsValid() {
		c.current = "traced"
	}
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.exits++
		c.current = ""
	}
}

func (c *callRecorder) record(obj any) {
	p := obj.(*corev1.Pod)
	c.mu.Lock()
	defer c.mu.Unlock()
	what := c.current
	if what == "" {
		what = "none"
	}
	c.entered[p.Namespace+"/"+p.Name] = what
}

func (c *callRecorder) OnAdd(obj any, _ bool) { c.record(obj) }
func (c *callRecorder) OnUpdate(_, obj any)   { c.record(obj) }
func (c *callRecorder) OnDelete(obj any)      { c.record(obj) }

// TestCallSpanHandlerIsToldEachCallsTrace: a handler that implements
// CallSpanHandler is told, before each call, the call's span, or that the
// informer left the call's change out of the traces; with tracing off it
// is told nothing. A change the sampler left out is told "untraced" as
// one the TraceFilter left out is, with or without a filter, so that what
// the call starts stays out of the traces too (issue 37: told nothing, a
// traced queue's Add in it was a root the sampler decided on again). For
// deltas and synthetic adds alike. Chapter 5 registered calls in
// internal/handlerctx before it offered this interface, for every
// handler, with no queue to read it.
func TestCallSpanHandlerIsToldEachCallsTrace(t *testing.T) {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "3"}}
	for i, name := range []string{"a", "b", "c"} {
		list.Items = append(list.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: string(rune('1' + i))}})
	}
	recording := func() trace.TracerProvider {
		return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	}
	neverSampled := func() trace.TracerProvider {
		return sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()), sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	}
	all := func(what string) map[string]string {
		return map[string]string{"ns/a": what, "ns/b": what, "ns/c": what}
	}
	for _, c := range []struct {
		name       string
		tp         trace.TracerProvider
		filter     deltafifo.TraceFilter
		deltas     map[string]string
		synthetic  map[string]string
		wantEnters bool
	}{
		{"traced, filtered", recording(), deltafifo.TraceKeys("ns/b"),
			map[string]string{"ns/a": "untraced", "ns/b": "traced", "ns/c": "untraced"},
			map[string]string{"ns/a": "untraced", "ns/b": "traced", "ns/c": "untraced"}, true},
		{"traced, no filter", recording(), nil, all("traced"), all("traced"), true},
		{"sampled out, no filter", neverSampled(), nil, all("untraced"), all("untraced"), true},
		{"sampled out, filtered", neverSampled(), deltafifo.TraceKeys("ns/b"), all("untraced"), all("untraced"), true},
		{"off", noop.NewTracerProvider(), deltafifo.TraceKeys("ns/b"), all("none"), all("none"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inf := NewSharedIndexInformerWithOptions(informerbench.NewLW(list, nil), &corev1.Pod{}, SharedIndexInformerOptions{
					TracerProvider: c.tp, TraceFilter: c.filter})
				early := &callRecorder{entered: map[string]string{}}
				_, err := inf.AddEventHandler(early)
				require.NoError(t, err)
				stop := runInformer(t, inf)
				synctest.Wait()
				late := &callRecorder{entered: map[string]string{}}
				_, err = inf.AddEventHandler(late) // synthetic adds
				require.NoError(t, err)
				synctest.Wait()
				stop()
				require.Equal(t, c.deltas, early.entered, "deltas")
				require.Equal(t, c.synthetic, late.entered, "a late handler's synthetic adds")
				for _, r := range []*callRecorder{early, late} {
					require.Equal(t, r.enters, r.exits, "every EnterCall's exit was called")
				}
				require.Equal(t, c.wantEnters, early.enters > 0)
			})
		})
	}
}
