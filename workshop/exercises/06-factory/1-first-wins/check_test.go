//go:build workshop

package firstwins

import (
	"slices"
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
	run := func(mineFirst bool) []string {
		f := factory.NewSharedInformerFactory(client, 0)
		mine := func(_ *factory.Client, resync time.Duration) processor.SharedIndexInformer {
			return processor.NewSharedIndexInformerWithOptions(kit.ListWatch(t, srv, apiserver.Pods), &corev1.Pod{}, processor.SharedIndexInformerOptions{ResyncPeriod: resync, Indexers: store.Indexers{"byNode": func(any) ([]string, error) { return nil, nil }}})
		}
		var second processor.SharedIndexInformer
		if mineFirst {
			f.InformerFor(&corev1.Pod{}, mine)
			second = f.Core().V1().Pods().Informer()
		} else {
			f.Core().V1().Pods().Informer()
			second = f.InformerFor(&corev1.Pod{}, mine)
		}
		var names []string
		for n := range second.GetIndexer().GetIndexers() {
			names = append(names, n)
		}
		slices.Sort(names)
		return names
	}
	// One message: which of A and B is wrong would say, for a choice of
	// two constructors, which one to swap.
	if a, b := run(true), run(false); !slices.Equal(a, A) || !slices.Equal(b, B) {
		t.Errorf("the second caller's informer does not have the indexes you predicted (A %q, B %q): whose constructor made the informer each caller got, and which indexes does the factory's own constructor give a typed informer?", A, B)
	}
}
