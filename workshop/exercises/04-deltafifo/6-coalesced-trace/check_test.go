//go:build workshop

package coalescedtrace

import (
	"context"
	"slices"
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
	for _, rv := range []string{"41", "57", "63"} {
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
	rootRV := func(s sdktrace.ReadOnlySpan) string {
		for _, x := range spans.InTrace(s) {
			if x.Name() == "ListAndWatch watch" {
				return kit.Attr(x, "informer.resource_version")
			}
		}
		return ""
	}
	byID := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans.Ended() {
		byID[s.SpanContext().SpanID().String()] = s
	}
	var linked []string
	for _, h := range handled {
		if rootRV(h) != "57" {
			continue
		}
		for _, l := range h.Links() {
			if s, ok := byID[l.SpanContext.SpanID().String()]; ok {
				linked = append(linked, kit.Attr(s, "informer.resource_version"))
			}
		}
	}
	slices.Sort(linked)
	if !slices.Equal(linked, LinkedRVs) {
		t.Errorf("LinkedRVs: you wrote %q, not the resourceVersions of the spans that HandleDeltas links to: which spans does a HandleDeltas link to, and is its own trace's among them?", LinkedRVs)
	}
	var longest sdktrace.ReadOnlySpan
	for _, s := range spans.Named("DeltaFIFO.queued", "") {
		if longest == nil || kit.Duration(s) > kit.Duration(longest) {
			longest = s
		}
	}
	if rv := rootRV(longest); rv != LongestWaitRV {
		t.Errorf("LongestWaitRV: you wrote %q, not the resourceVersion in the trace of the longest DeltaFIFO.queued span", LongestWaitRV)
	}
}
