//go:build workshop

package firstwins

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	factory "github.com/informer-anatomy/informer-anatomy/chapters/06-factory"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestPredictions(t *testing.T) {
	srv := kit.StartServer(t)
	client, err := factory.NewForConfig(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	run := func(mineFirst bool) (string, bool) {
		f := factory.NewSharedInformerFactory(client, 0)
		ran := "typed"
		mine := func(_ *factory.Client, resync time.Duration) processor.SharedIndexInformer {
			ran = "mine"
			return processor.NewSharedIndexInformerWithOptions(kit.ListWatch(t, srv, apiserver.Pods), &corev1.Pod{}, processor.SharedIndexInformerOptions{ResyncPeriod: resync, Indexers: store.Indexers{"byNode": func(any) ([]string, error) { return nil, nil }}})
		}
		var first, second processor.SharedIndexInformer
		if mineFirst {
			first = f.InformerFor(&corev1.Pod{}, mine)
			second = f.Core().V1().Pods().Informer()
		} else {
			first = f.Core().V1().Pods().Informer()
			second = f.InformerFor(&corev1.Pod{}, mine)
		}
		return ran, first == second
	}
	a, sameA := run(true)
	b, sameB := run(false)
	if a != A {
		t.Errorf("A: you predicted %q, not the constructor that ran", A)
	}
	if b != B {
		t.Errorf("B: you predicted %q, not the constructor that ran", B)
	}
	if same := sameA && sameB; same != Same {
		t.Errorf("Same: you predicted %v, not what the factory handed out", Same)
	}
}
