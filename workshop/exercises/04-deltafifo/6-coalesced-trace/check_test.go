//go:build workshop

package coalescedtrace

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestFindings(t *testing.T) {
	spans := kit.NewSpans()
	q := deltafifo.NewDeltaFIFOWithOptions(deltafifo.DeltaFIFOOptions{Name: "pods", KnownObjects: store.NewStore(store.MetaNamespaceKeyFunc), TracerProvider: spans.Provider()})
	for _, rv := range []string{"1", "2", "3"} {
		if err := q.UpdateWithContext(context.Background(), kit.Pod("", "a", kit.WithRV(rv))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Millisecond)
	}
	_, err := q.Pop(func(obj any, initial bool) error {
		_, ss := deltafifo.StartHandleDeltas(spans.Provider().Tracer("check"), q.Name(), "default/a", obj.(deltafifo.Deltas), initial)
		for _, s := range ss {
			s.End()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	handled := spans.Named("HandleDeltas", "")
	if len(handled) != 3 {
		t.Fatalf("expected 3 HandleDeltas spans, found %d", len(handled))
	}
	if got := kit.Attr(handled[0], "informer.deltas.count"); got != Count {
		t.Errorf("Count: you wrote %q, not the informer.deltas.count of the HandleDeltas spans", Count)
	}
	for _, h := range handled {
		if len(h.Links()) != Links {
			t.Errorf("Links: you wrote %d, not the number of links of a HandleDeltas span", Links)
			break
		}
	}
	var longest sdktrace.ReadOnlySpan
	for _, s := range spans.Named("DeltaFIFO.queued", "") {
		if longest == nil || kit.Duration(s) > kit.Duration(longest) {
			longest = s
		}
	}
	rv := ""
	for _, s := range spans.InTrace(longest) {
		if s.Name() == "ListAndWatch watch" {
			rv = kit.Attr(s, "informer.resource_version")
		}
	}
	if rv != LongestWaitRV {
		t.Errorf("LongestWaitRV: you wrote %q, not the resourceVersion in the trace of the longest DeltaFIFO.queued span", LongestWaitRV)
	}
}
