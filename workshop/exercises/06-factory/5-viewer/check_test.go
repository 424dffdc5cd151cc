//go:build workshop

package viewer

import (
	"context"
	"testing"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestFindings(t *testing.T) {
	spans := kit.NewSpans()
	q := deltafifo.NewDeltaFIFOWithOptions(deltafifo.DeltaFIFOOptions{Name: "pods", KnownObjects: store.NewStore(store.MetaNamespaceKeyFunc), TracerProvider: spans.Provider()})
	for _, rv := range []string{"1", "2", "3", "4", "5", "6", "7"} {
		if err := q.UpdateWithContext(context.Background(), kit.Pod("demo", "busy", kit.WithRV(rv))); err != nil {
			t.Fatal(err)
		}
	}
	_, err := q.Pop(func(obj any, initial bool) error {
		_, ss := deltafifo.StartHandleDeltas(spans.Provider().Tracer("check"), q.Name(), "demo/busy", obj.(deltafifo.Deltas), initial)
		for _, s := range ss {
			s.End()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	traces := map[string]bool{}
	for _, s := range spans.Ended() {
		traces[s.SpanContext().TraceID().String()] = true
	}
	links := true
	for _, h := range spans.Named("HandleDeltas", "") {
		if len(h.Links()) != Links {
			links = false
		}
	}
	// One message for both: two small numbers named one by one would be
	// found by counting up.
	if len(traces) != Traces || !links {
		t.Errorf("your counts for seven deltas popped together are not what the spans show: how many roots do seven watch events make, and to which of them does each HandleDeltas link (what you saw for five in the viewer)?")
	}
}
