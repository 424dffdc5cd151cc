package result

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// RootIs matches by name and, when asked, by event type; "" matches any
// event, so a lesson can pick an AddEventHandler root, which has none.
func TestRootIs(t *testing.T) {
	root := func(name, event string) *spancheck.Span {
		return &spancheck.Span{Name: name, Attrs: map[attribute.Key]string{tracing.KeyEventType: event}}
	}
	for _, c := range []struct {
		name, event string
		span        *spancheck.Span
		want        bool
	}{
		{"ListAndWatch watch", "MODIFIED", root("ListAndWatch watch", "MODIFIED"), true},
		{"ListAndWatch watch", "MODIFIED", root("ListAndWatch watch", "ADDED"), false},
		{"ListAndWatch watch", "MODIFIED", root("ListAndWatch watchlist", "MODIFIED"), false},
		{"AddEventHandler", "", root("AddEventHandler", ""), true},
		{"AddEventHandler", "", root("AddEventHandler", "ADDED"), true},
	} {
		if got := RootIs(c.name, c.event)(c.span); got != c.want {
			t.Errorf("RootIs(%q, %q) on %s %s = %v, want %v", c.name, c.event, c.span.Name, c.span.Attr(tracing.KeyEventType), got, c.want)
		}
	}
	s := Show("t", "demo/web-1", RootIs("x", ""))
	if s.Title != "t" || s.Key != "demo/web-1" || s.Match == nil || s.Last || s.Step != "" {
		t.Errorf("Show = %+v", s)
	}
}
