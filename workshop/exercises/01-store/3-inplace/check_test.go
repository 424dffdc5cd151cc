//go:build workshop

package inplace

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func byNode(obj any) ([]string, error) { return []string{obj.(*corev1.Pod).Spec.NodeName}, nil }

func run(t *testing.T, move func(s store.Indexer, got *corev1.Pod)) Counts {
	s := store.NewIndexer(store.MetaNamespaceKeyFunc, store.Indexers{"byNode": byNode})
	if err := s.Add(kit.Pod("", "p", kit.OnNode("n1"))); err != nil {
		t.Fatal(err)
	}
	obj, _, _ := s.GetByKey("default/p")
	move(s, obj.(*corev1.Pod))
	n1, _ := s.ByIndex("byNode", "n1")
	n2, _ := s.ByIndex("byNode", "n2")
	return Counts{len(n1), len(n2)}
}

// TestPredictions says in one message whether the three predictions are
// right, and not which of them is wrong: a message per prediction let a
// script that tries small counts pass in a few runs, each prediction
// searched on its own.
func TestPredictions(t *testing.T) {
	wrong, tooMany := false, false
	for _, c := range []struct {
		name    string
		predict Counts
		move    func(s store.Indexer, got *corev1.Pod)
	}{
		{"InPlace", InPlace, func(_ store.Indexer, p *corev1.Pod) { p.Spec.NodeName = "n2" }},
		{"InPlaceThenUpdate", InPlaceThenUpdate, func(s store.Indexer, p *corev1.Pod) { p.Spec.NodeName = "n2"; _ = s.Update(p) }},
		{"CopyThenUpdate", CopyThenUpdate, func(s store.Indexer, p *corev1.Pod) {
			c := p.DeepCopy()
			c.Spec.NodeName = "n2"
			_ = s.Update(c)
		}},
	} {
		if got := run(t, c.move); got != c.predict {
			wrong = true
		}
		if c.predict.OnN1 > 1 || c.predict.OnN2 > 1 {
			tooMany = true
		}
	}
	if wrong {
		msg := "your counts are not what ByIndex returns with chapter 1's store after the three moves: for each, ask which node's index entry the store removes when it is told of the change, and from which object it computes that entry (the storeIndex invariant)"
		if tooMany {
			msg += "; and p is one pod: no count can be above 1"
		}
		t.Error(msg)
	}
}
