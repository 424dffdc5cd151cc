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
	"github.com/informer-anatomy/informer-anatomy/internal/handlerctx"
	"github.com/informer-anatomy/informer-anatomy/internal/informerbench"
)

// callRegistration records, for each handler call, what a traced
// workqueue's Add made in it would find in internal/handlerctx.
type callRegistration struct {
	mu  sync.Mutex
	got map[string]string // key -> "traced", "untraced" or "none"
}

func (c *callRegistration) record(obj any) {
	sc, ok := handlerctx.Current()
	what := "none"
	switch {
	case ok && sc.IsValid():
		what = "traced"
	case ok:
		what = "untraced"
	}
	p := obj.(*corev1.Pod)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got[p.Namespace+"/"+p.Name] = what
}

func (c *callRegistration) OnAdd(obj any, _ bool) { c.record(obj) }
func (c *callRegistration) OnUpdate(_, obj any)   { c.record(obj) }
func (c *callRegistration) OnDelete(obj any)      { c.record(obj) }

// TestHandlerCallsAreRegisteredTracedOrUntraced: with tracing on and a
// TraceFilter naming one pod, that pod's handler calls are registered
// with their span and the others as untraced, for deltas and for a late
// handler's synthetic adds alike, so that a traced queue leaves them out
// too; with tracing off nothing is registered.
func TestHandlerCallsAreRegisteredTracedOrUntraced(t *testing.T) {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "3"}}
	for i, name := range []string{"a", "b", "c"} {
		list.Items = append(list.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: string(rune('1' + i))}})
	}
	for _, c := range []struct {
		name string
		tp   trace.TracerProvider
		want map[string]string
	}{
		{"traced", sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder())),
			map[string]string{"ns/a": "untraced", "ns/b": "traced", "ns/c": "untraced"}},
		{"off", noop.NewTracerProvider(), map[string]string{"ns/a": "none", "ns/b": "none", "ns/c": "none"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inf := NewSharedIndexInformerWithOptions(informerbench.NewLW(list, nil), &corev1.Pod{}, SharedIndexInformerOptions{
					TracerProvider: c.tp, TraceFilter: deltafifo.TraceKeys("ns/b")})
				early := &callRegistration{got: map[string]string{}}
				_, err := inf.AddEventHandler(early)
				require.NoError(t, err)
				stop := runInformer(t, inf)
				synctest.Wait()
				late := &callRegistration{got: map[string]string{}}
				_, err = inf.AddEventHandler(late) // synthetic adds
				require.NoError(t, err)
				synctest.Wait()
				stop()
				require.Equal(t, c.want, early.got, "deltas")
				require.Equal(t, c.want, late.got, "a late handler's synthetic adds")
				require.Zero(t, handlerctx.Active())
			})
		})
	}
}
