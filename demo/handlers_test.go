package demo

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
)

// The handlers' type names are what a waterfall, the live view, the
// README's sample and the workshop's answers show as informer.listener:
// moving them to a package of another name would change every one.
func TestHandlerTypeNames(t *testing.T) {
	for _, c := range []struct {
		h    Handler
		want string
	}{
		{NewAudit(), "demo.auditHandler"},
		{NewMetrics(), "demo.metricsHandler"},
		{NewSlow(0), "*demo.slowHandler"},
		{NewTunable(), strings.TrimSuffix(TunableListener, "#2")},
		{NewLate(), "*demo.lateHandler"},
		{NewExtra(), ExtraListener},
	} {
		if got := fmt.Sprintf("%T", c.h); got != c.want {
			t.Errorf("%%T = %q, want %q", got, c.want)
		}
	}
}

func pod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, ResourceVersion: rv}}
}

// A Seen follows adds, updates and deletes per key; an update with an
// unchanged resourceVersion counts as a resync; a delete given as a
// tombstone is remembered until forgotten; CaughtUp compares exactly.
func TestSeen(t *testing.T) {
	a, b := NewAudit(), NewMetrics()
	hs := []Handler{a, b}
	for _, h := range hs {
		h.OnAdd(pod("web-1", "1"), false)
		h.OnAdd(pod("web-2", "2"), false)
		h.OnUpdate(pod("web-1", "1"), pod("web-1", "3"))
	}
	want := map[string]string{"demo/web-1": "3", "demo/web-2": "2"}
	if !CaughtUp(hs, want) {
		t.Fatalf("not caught up: %v", a.Record().Versions())
	}
	a.OnUpdate(pod("web-2", "2"), pod("web-2", "2"))
	a.OnDelete(deltafifo.DeletedFinalStateUnknown{Key: "demo/web-1", Obj: pod("web-1", "3")})
	s := a.Record()
	if got := []any{s.Calls(), s.Adds(), s.Resyncs(), s.WasResynced("demo/web-2"), s.WasResynced("demo/web-1"), s.WasTombstoned("demo/web-1")}; fmt.Sprint(got) != fmt.Sprint([]any{5, 2, 1, true, false, true}) {
		t.Errorf("calls, adds, resyncs, resynced web-2, resynced web-1, tombstoned web-1 = %v", got)
	}
	if CaughtUp(hs, want) {
		t.Error("CaughtUp with a handler that has forgotten demo/web-1")
	}
	if !CaughtUp(hs[:1], map[string]string{"demo/web-2": "2"}) {
		t.Errorf("a saw %v", s.Versions())
	}
	s.ForgetTombstone("demo/web-1")
	if s.WasTombstoned("demo/web-1") {
		t.Error("ForgetTombstone kept it")
	}
	if got := CountedCalls(hs); got != 8 {
		t.Errorf("CountedCalls = %d, want 8", got)
	}
}
