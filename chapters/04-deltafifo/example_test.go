package deltafifo_test

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
)

func pod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv}}
}

// What a consumer sees: changes to one key arrive together, in order; the key
// keeps its place in line; a relist that no longer has an object queues a
// tombstone for it.
func ExampleDeltaFIFO() {
	cache := store.NewStore(deltafifo.DeletionHandlingMetaNamespaceKeyFunc)
	_ = cache.Add(pod("gone", "1")) // the informer's cache knows it from earlier

	q := deltafifo.NewDeltaFIFOWithOptions(deltafifo.DeltaFIFOOptions{
		KnownObjects:          cache,
		EmitDeltaTypeReplaced: true,
	})
	_ = q.Add(pod("web", "2"))
	_ = q.Add(pod("db", "3"))
	_ = q.Update(pod("web", "4"))
	_ = q.Replace([]any{pod("web", "5"), pod("db", "6")}, "6") // "gone" was not listed

	for range 3 {
		_, _ = q.Pop(func(obj any, _ bool) error {
			var line []string
			for _, d := range obj.(deltafifo.Deltas) {
				switch o := d.Object.(type) {
				case deltafifo.DeletedFinalStateUnknown:
					line = append(line, fmt.Sprintf("%s %s (tombstone)", d.Type, o.Key))
				case *corev1.Pod:
					line = append(line, fmt.Sprintf("%s %s@%s", d.Type, o.Name, o.ResourceVersion))
				}
			}
			fmt.Println(strings.Join(line, ", "))
			return nil
		})
	}
	// Output:
	// Added web@2, Updated web@4, Replaced web@5
	// Added db@3, Replaced db@6
	// Deleted default/gone (tombstone)
}
