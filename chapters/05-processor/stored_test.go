package processor

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// Observer.Stored and ReadCache add up to the cache: started from
// ReadCache's answer on a running informer, the objects Stored is told
// entered, less those it is told left, are exactly the objects the cache
// holds (the same pointers) after adds, updates, deletes and a relist
// forced by a 410, whose deletions arrive as tombstones.
func TestObserverStoredAddsUpToTheCache(t *testing.T) {
	for _, queue := range []QueueKind{RealFIFOQueue, DeltaFIFOQueue} {
		t.Run(queue.String(), func(t *testing.T) {
			srv, err := apiserver.Start(apiserver.Options{})
			require.NoError(t, err)
			t.Cleanup(srv.Stop)
			var mu sync.Mutex
			counting := false
			held := map[any]int{}
			inf := NewSharedIndexInformerWithOptions(srv.ListerWatcher(apiserver.Pods, ""), &corev1.Pod{}, SharedIndexInformerOptions{
				Queue: queue,
				Observer: Observer{Stored: func(old, new any) {
					mu.Lock()
					defer mu.Unlock()
					if !counting {
						return
					}
					if old != nil {
						if held[old]--; held[old] == 0 {
							delete(held, old)
						}
					}
					if new != nil {
						held[new]++
					}
				}},
			})
			create := func(i int) {
				_, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("p", i)}})
				require.NoError(t, err)
			}
			for i := range 5 {
				create(i)
			}
			runInformer(t, inf)
			testutil.Eventually(t, "five cached", func() bool { return len(inf.GetStore().List()) == 5 })
			require.NoError(t, ReadCache(inf, func(objs []any) {
				mu.Lock()
				defer mu.Unlock()
				for _, o := range objs {
					held[o]++
				}
				counting = true
			}))
			for i := 5; i < 10; i++ {
				create(i)
			}
			for _, i := range []int{1, 6} {
				obj, err := srv.Get(apiserver.Pods, "ns", fmt.Sprint("p", i))
				require.NoError(t, err)
				p := obj.(*corev1.Pod)
				p.Labels = map[string]string{"changed": "yes"}
				_, err = srv.Update(p)
				require.NoError(t, err)
			}
			require.NoError(t, srv.Delete(apiserver.Pods, "ns", "p2"))
			srv.Inject(apiserver.Fault{Verb: "watch", Status: 410})
			srv.CloseWatches()
			require.NoError(t, srv.Delete(apiserver.Pods, "ns", "p3")) // gone by the relist: a tombstone
			matches := func() bool {
				mu.Lock()
				defer mu.Unlock()
				objs := inf.GetStore().List()
				if len(objs) != len(held) {
					return false
				}
				for _, o := range objs {
					if held[o] != 1 {
						return false
					}
				}
				return true
			}
			testutil.Eventually(t, "Stored's objects are the cache's", func() bool { return len(inf.GetStore().List()) == 8 && matches() })
			assert.Error(t, ReadCache(nil, func([]any) {}), "not an informer of this package")
		})
	}
}
