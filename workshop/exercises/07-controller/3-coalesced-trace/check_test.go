//go:build workshop

package coalescedtrace

import (
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit/ctrlkit"
)

func TestFindings(t *testing.T) {
	spans := kit.NewSpans()
	c, key := ctrlkit.Burst(t, spans)
	kit.WaitFor(t, "both reconciles to end", func() bool { return c.Reconciles(key) == 2 })

	all := spans.Ended()
	byID := map[string]sdktrace.ReadOnlySpan{}
	children := map[string]int{}
	for _, s := range all {
		byID[s.SpanContext().SpanID().String()] = s
		children[s.Parent().SpanID().String()]++
	}
	var second sdktrace.ReadOnlySpan
	for _, s := range spans.Named("workqueue.process", "") {
		if second == nil || s.StartTime().After(second.StartTime()) {
			second = s
		}
	}
	if second == nil {
		t.Fatal("no reconcile span: is the queue traced?")
	}
	if Links != len(second.Links()) {
		t.Errorf("Links: you wrote %d, not the number of links of the second reconcile's span; see hint 1", Links)
	}
	var chain []string
	for s := second; s != nil; s = byID[s.Parent().SpanID().String()] {
		chain = append(chain, s.Name())
		if len(s.Name()) > 2 && s.Name()[:2] == "On" {
			break
		}
	}
	if d := kit.DiffList(Chain, chain); d != "" {
		t.Errorf("Chain: %s; see hint 2", d)
	}
	merged := ""
	for _, s := range spans.Named("workqueue.add", "") {
		if kit.Attr(s, "workqueue.coalesced") == "true" && children[s.SpanContext().SpanID().String()] == 0 {
			merged = s.Name()
		}
	}
	if MergedEnd == "" || MergedEnd != merged {
		t.Errorf("MergedEnd: you wrote %q, not the span a merged update's trace ends with; see hint 3", MergedEnd)
	}
}
