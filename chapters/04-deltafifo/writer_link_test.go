package deltafifo

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	corev1 "k8s.io/api/core/v1"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// A writer's span, as a reconcile elsewhere would have stamped it.
var writerSpan = trace.NewSpanContext(trace.SpanContextConfig{
	TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
	SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
	TraceFlags: trace.FlagsSampled,
})

// annotated is a pod carrying traceparent, or no annotation at all when
// traceparent is nil.
func annotated(name, rv string, traceparent *string) *corev1.Pod {
	p := mk(name, rv)
	if traceparent != nil {
		p.Annotations = map[string]string{tracing.AnnotationTraceparent: *traceparent, "other": "kept"}
	}
	return p
}

func ptr(s string) *string { return &s }

// writerLinks returns the links of root that name a writer
// (informer.link.annotation), and the other links.
func writerLinks(root sdktrace.ReadOnlySpan) (writers, others []trace.SpanContext) {
	for _, l := range root.Links() {
		marked := false
		for _, a := range l.Attributes {
			if a.Key == tracing.KeyLinkAnnotation {
				marked = a.Value.AsString() == tracing.AnnotationTraceparent
			}
		}
		if marked {
			writers = append(writers, l.SpanContext)
		} else {
			others = append(others, l.SpanContext)
		}
	}
	return writers, others
}

// ignoredEvents returns the values of root's traceparent.ignored events.
func ignoredEvents(root sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, e := range root.Events() {
		if e.Name != tracing.EventTraceparentIgnored {
			continue
		}
		v := "<no value>"
		for _, a := range e.Attributes {
			if a.Key == tracing.KeyTraceparent {
				v = a.Value.AsString()
			}
		}
		out = append(out, v)
	}
	return out
}

// queueUnderTest is the part of both queues this test drives.
type queueUnderTest interface {
	Add(any) error
	Update(any) error
	Delete(any) error
	Replace([]any, string) error
}

func bothQueues(tp trace.TracerProvider, transform TransformFunc) map[string]queueUnderTest {
	return map[string]queueUnderTest{
		"DeltaFIFO": NewDeltaFIFOWithOptions(DeltaFIFOOptions{Name: "pods", KnownObjects: store.NewStore(DeletionHandlingMetaNamespaceKeyFunc),
			TracerProvider: tp, Transformer: transform}),
		"RealFIFO": NewRealFIFOWithOptions(RealFIFOOptions{Name: "pods", KnownObjects: store.NewStore(DeletionHandlingMetaNamespaceKeyFunc),
			TracerProvider: tp, Transformer: transform}),
	}
}

// rootOf is the one root recorded for an object of that name and event
// type.
func rootOf(t *testing.T, spans []sdktrace.ReadOnlySpan, name, event string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if strings.HasPrefix(s.Name(), tracing.SpanRootPrefix) && attr(s, tracing.KeyObjectKey) == "ns/"+name && attr(s, tracing.KeyEventType) == event {
			found = append(found, s)
		}
	}
	require.Len(t, found, 1, "%s roots of ns/%s", event, name)
	return found[0]
}

// A watch event (add or update) whose object carries a traceparent gets a
// link from its root to the span it names, marked as the writer's; a
// delete, a listed object and an object without the annotation get none.
func TestWatchEventRootLinksToTheWriterOfItsObject(t *testing.T) {
	valid := tracing.FormatTraceparent(writerSpan)
	require.Equal(t, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", valid)
	for name, build := range map[string]func(trace.TracerProvider) queueUnderTest{
		"DeltaFIFO": func(tp trace.TracerProvider) queueUnderTest { return bothQueues(tp, nil)["DeltaFIFO"] },
		"RealFIFO":  func(tp trace.TracerProvider) queueUnderTest { return bothQueues(tp, nil)["RealFIFO"] },
	} {
		t.Run(name, func(t *testing.T) {
			rec, tp := recorder()
			f := build(tp)
			before := tracing.TraceparentsIgnored()
			require.NoError(t, f.Add(annotated("added", "1", &valid)))
			require.NoError(t, f.Update(annotated("updated", "2", &valid)))
			require.NoError(t, f.Add(annotated("deleted", "3", nil))) // the DeltaFIFO drops a delete of a key it never saw
			require.NoError(t, f.Delete(annotated("deleted", "3", &valid)))
			require.NoError(t, f.Add(annotated("plain", "4", nil)))
			require.NoError(t, f.Replace([]any{annotated("listed", "5", &valid)}, "5"))
			spans := rec.Ended()

			for obj, event := range map[string]string{"added": "ADDED", "updated": "MODIFIED"} {
				root := rootOf(t, spans, obj, event)
				writers, others := writerLinks(root)
				require.Len(t, writers, 1, "%s: one link to the writer", obj)
				assert.Equal(t, writerSpan.TraceID(), writers[0].TraceID(), obj)
				assert.Equal(t, writerSpan.SpanID(), writers[0].SpanID(), obj)
				assert.True(t, writers[0].IsRemote(), "%s: the writer's span is in another process's trace", obj)
				assert.Empty(t, others, "%s: no cycle span in ctx here, so no other link", obj)
				assert.NotEqual(t, writerSpan.TraceID(), root.SpanContext().TraceID(), "%s: a link, not a parent: the root starts its own trace", obj)
				assert.False(t, root.Parent().IsValid(), obj)
				assert.Empty(t, ignoredEvents(root), obj)
			}
			for obj, event := range map[string]string{"deleted": "DELETED", "plain": "ADDED", "listed": "LISTED"} {
				root := rootOf(t, spans, obj, event)
				writers, _ := writerLinks(root)
				assert.Empty(t, writers, "%s: no writer's link", obj)
				assert.Empty(t, ignoredEvents(root), obj)
			}
			assert.Equal(t, before, tracing.TraceparentsIgnored(), "nothing was ignored")
		})
	}
}

// An annotation that does not parse is ignored: the enqueue succeeds, the
// root has no writer's link but an event saying what was ignored, and the
// counter goes up once per event.
func TestUnparsableTraceparentIsIgnoredAndCounted(t *testing.T) {
	long := "00-" + strings.Repeat("a", 200)
	cases := map[string]string{
		"garbage":        "not a traceparent",
		"empty":          "",
		"zero trace id":  "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"upper-case hex": "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",
		"short span id":  "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902-01",
		"version ff":     "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"too long":       long,
	}
	for queue := range bothQueues(noop.NewTracerProvider(), nil) {
		for name, value := range cases {
			t.Run(queue+"/"+name, func(t *testing.T) {
				rec, tp := recorder()
				f := bothQueues(tp, nil)[queue]
				before := tracing.TraceparentsIgnored()
				require.NoError(t, f.Add(annotated("bad", "1", &value)), "bad input in an annotation is never an error")
				require.NoError(t, f.Update(annotated("bad", "2", &value)))
				assert.Equal(t, before+2, tracing.TraceparentsIgnored(), "counted once per watch event")

				var roots []sdktrace.ReadOnlySpan
				for _, s := range rec.Ended() {
					if strings.HasPrefix(s.Name(), tracing.SpanRootPrefix) {
						roots = append(roots, s)
					}
				}
				require.Len(t, roots, 2)
				// Cut to 64 bytes with a mark (tracing.Cut): 61 of the
				// value's bytes and "…".
				want := value
				if len(want) > 64 {
					want = want[:61] + "…"
				}
				for _, root := range roots {
					writers, _ := writerLinks(root)
					assert.Empty(t, writers)
					assert.Equal(t, []string{want}, ignoredEvents(root))
				}
			})
		}
	}
}

// The link is read from the object as the reflector handed it in, before
// the queue's transform: a transform that drops annotations (to save
// memory) does not drop the link.
func TestWriterLinkIsReadBeforeTheTransform(t *testing.T) {
	valid := tracing.FormatTraceparent(writerSpan)
	strip := func(obj any) (any, error) {
		p := obj.(*corev1.Pod).DeepCopy()
		p.Annotations = nil
		return p, nil
	}
	for queue := range bothQueues(noop.NewTracerProvider(), nil) {
		t.Run(queue, func(t *testing.T) {
			rec, tp := recorder()
			f := bothQueues(tp, strip)[queue]
			require.NoError(t, f.Add(annotated("a", "1", &valid)))
			writers, _ := writerLinks(rootOf(t, rec.Ended(), "a", "ADDED"))
			require.Len(t, writers, 1)
			assert.Equal(t, writerSpan.SpanID(), writers[0].SpanID())
		})
	}
}

// With tracing off nothing is parsed, so nothing is counted either.
func TestNoTraceparentIsReadWithTracingOff(t *testing.T) {
	for queue, f := range bothQueues(noop.NewTracerProvider(), nil) {
		before := tracing.TraceparentsIgnored()
		require.NoError(t, f.Add(annotated("bad", "1", ptr("not a traceparent"))), queue)
		assert.Equal(t, before, tracing.TraceparentsIgnored(), queue)
	}
}

// The link and the cycle's link live side by side: a root made inside a
// reflector cycle (its span in ctx) keeps its link to the cycle, unmarked.
func TestWriterLinkBesideTheCycleLink(t *testing.T) {
	valid := tracing.FormatTraceparent(writerSpan)
	rec, tp := recorder()
	ctx, cycle := tp.Tracer("test").Start(context.Background(), tracing.SpanListAndWatchCycle)
	f := NewRealFIFOWithOptions(RealFIFOOptions{Name: "pods", KnownObjects: store.NewStore(DeletionHandlingMetaNamespaceKeyFunc), TracerProvider: tp})
	require.NoError(t, f.AddWithContext(ctx, annotated("a", "1", &valid)))
	cycle.End()
	writers, others := writerLinks(rootOf(t, rec.Ended(), "a", "ADDED"))
	require.Len(t, writers, 1)
	require.Len(t, others, 1)
	assert.Equal(t, cycle.SpanContext(), others[0])
}
