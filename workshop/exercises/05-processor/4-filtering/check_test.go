//go:build workshop

package filtering

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kcache "k8s.io/client-go/tools/cache"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

type handler interface {
	OnAdd(obj any, isInInitialList bool)
	OnUpdate(oldObj, newObj any)
	OnDelete(obj any)
}

func web(obj any) bool { return obj.(*corev1.Pod).Labels["tier"] == "web" }

func drive(h handler) {
	p := func(tier string) *corev1.Pod { return kit.Pod("", "p", kit.WithLabels("tier", tier)) }
	annotated := p("db")
	annotated.Annotations = map[string]string{"x": "y"}
	h.OnAdd(p("web"), false)
	h.OnUpdate(p("web"), p("db"))
	h.OnUpdate(p("db"), annotated)
	h.OnUpdate(annotated, p("web"))
	h.OnDelete(p("web"))
}

func TestPrediction(t *testing.T) {
	ours, theirs := &kit.Recorder{}, &kit.Recorder{}
	drive(processor.FilteringResourceEventHandler{FilterFunc: web, Handler: ours})
	drive(kcache.FilteringResourceEventHandler{FilterFunc: web, Handler: theirs})
	got := ours.Strings()
	if d := kit.DiffList(Calls, got); d != "" {
		t.Errorf("Calls: you predicted %q, not the calls the handler behind chapter 5's FilteringResourceEventHandler got: %s", Calls, d)
	}
	if !slices.Equal(theirs.Strings(), got) {
		// Said only when the two disagree: a bug in chapter 5.
		t.Errorf("Calls: client-go's FilteringResourceEventHandler passes something else than chapter 5's (a bug of chapter 5: please report it)")
	}
}
