//go:build workshop

package filtering

import (
	"slices"
	"strings"
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
	if !slices.Equal(Calls, got) {
		t.Errorf("Calls: you predicted %q, not the calls the handler behind chapter 5's FilteringResourceEventHandler got: %s", Calls, whatIsWrong(Calls, got))
	}
	if !slices.Equal(theirs.Strings(), got) {
		// Said only when the two disagree: a bug in chapter 5.
		t.Errorf("Calls: client-go's FilteringResourceEventHandler passes something else than chapter 5's (a bug of chapter 5: please report it)")
	}
}

// whatIsWrong says what kind of mistake yours holds, and never which
// call is wrong: "your entry N is the first that is not what happened"
// let a script that tries the task's three calls pass a position at a
// time.
func whatIsWrong(yours, real []string) string {
	var says []string
	switch {
	case len(yours) < len(real):
		says = append(says, "the handler got more calls than you wrote")
	case len(yours) > len(real):
		says = append(says, "the handler got fewer calls than you wrote")
	}
	for _, c := range yours {
		if !slices.Contains([]string{"add default/p", "update default/p", "delete default/p"}, c) {
			says = append(says, "some of your calls are not among the three forms the task gives")
			break
		}
	}
	says = append(says, "for each OnUpdate, ask whether the old pod passed the filter and whether the new one does, and what the handler behind the wrapper has been told of p so far")
	return strings.Join(says, "; ")
}
