package dropin_test

// A controller's unit test, as most are written: client-go's informer
// factory on the fake clientset (k8s.io/client-go/kubernetes/fake). One
// factory hands out client-go's pod informer, the other ours (through
// InformerFor, the door dropin's doc names); the same handler and the same
// writes must give the same handler calls, with one LIST each.

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/dropin"
)

// fakeController is one side: a fake clientset, a factory, its pod informer
// and lister, and a handler that logs its calls.
type fakeController struct {
	client  *fake.Clientset
	factory informers.SharedInformerFactory
	rec     *recorder
}

// newFakeController builds client-go's pod informer, or with ours set,
// dropin's, given to the factory through InformerFor with a ListerWatcher
// built as the generated informer builds its own (informers/core/v1/pod.go):
// wrapped by cache.ToListWatcherWithWatchListSemantics with the client, so
// our reflector learns, as client-go's does, that the fake is a test double.
func newFakeController(t *testing.T, ours bool, objs ...runtime.Object) *fakeController {
	c := &fakeController{client: fake.NewClientset(objs...), rec: &recorder{}}
	c.factory = informers.NewSharedInformerFactory(c.client, 0)
	if ours {
		c.factory.InformerFor(&corev1.Pod{}, func(client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
			lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
				ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
					return client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, o)
				},
				WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
					return client.CoreV1().Pods(metav1.NamespaceAll).Watch(ctx, o)
				},
			}, client)
			return dropin.NewSharedIndexInformer(lw, &corev1.Pod{}, resync, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		})
	}
	_, err := c.factory.Core().V1().Pods().Informer().AddEventHandler(c.rec)
	require.NoError(t, err)
	return c
}

func (c *fakeController) lists() int {
	n := 0
	for _, a := range c.client.Actions() {
		if a.GetVerb() == "list" {
			n++
		}
	}
	return n
}

func (c *fakeController) cached(t *testing.T) []string {
	pods, err := c.factory.Core().V1().Pods().Lister().List(labels.Everything())
	require.NoError(t, err)
	var out []string
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	slices.Sort(out)
	return out
}

func TestFakeClientsetControllerSeesClientGosHandlerCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seed := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "seed"}}
		theirs := newFakeController(t, false, seed.DeepCopy())
		ours := newFakeController(t, true, seed.DeepCopy())
		// The generated accessor wraps whatever InformerFor holds in a typed
		// informer; InformerFor, asked again, returns what it holds.
		_, isOurs := ours.factory.InformerFor(&corev1.Pod{}, nil).(*dropin.Informer)
		require.True(t, isOurs, "the factory holds dropin's informer")

		ctx, cancel := context.WithCancel(context.Background())
		both := []*fakeController{theirs, ours}
		for _, c := range both {
			c.factory.Start(ctx.Done())
		}
		start := time.Now()
		for _, c := range both {
			for typ, ok := range c.factory.WaitForCacheSync(ctx.Done()) {
				require.True(t, ok, "%v synced", typ)
			}
		}
		// Six creates, each waited for.
		for i := range 6 {
			name := fmt.Sprint("p", i)
			for _, c := range both {
				_, err := c.client.CoreV1().Pods("ns").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}, metav1.CreateOptions{})
				require.NoError(t, err)
			}
			synctest.Wait()
			for _, c := range both {
				require.Contains(t, c.cached(t), "ns/"+name, "create %d cached", i)
			}
		}
		assert.Zero(t, time.Since(start), "the creates were cached without a backoff")
		before := len(theirs.rec.log())

		// The burst: five creates, an update and a delete, not waited for.
		for _, c := range both {
			for i := range 5 {
				_, err := c.client.CoreV1().Pods("ns").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("b", i)}}, metav1.CreateOptions{})
				require.NoError(t, err)
			}
			_, err := c.client.CoreV1().Pods("ns").Update(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b0", Labels: map[string]string{"x": "y"}}}, metav1.UpdateOptions{})
			require.NoError(t, err)
			require.NoError(t, c.client.CoreV1().Pods("ns").Delete(ctx, "b1", metav1.DeleteOptions{}))
		}
		synctest.Wait()

		want := []string{
			"add ns/b0@ initial=false", "add ns/b1@ initial=false", "add ns/b2@ initial=false",
			"add ns/b3@ initial=false", "add ns/b4@ initial=false", "update ns/b0@->", "delete ns/b1@",
		}
		assert.Equal(t, want, theirs.rec.log()[before:], "client-go's handler calls for the burst")
		assert.Equal(t, theirs.rec.log(), ours.rec.log(), "the same handler calls as client-go's")
		assert.Equal(t, theirs.cached(t), ours.cached(t), "the same cache")
		assert.Equal(t, 1, theirs.lists(), "client-go LISTed once")
		assert.Equal(t, 1, ours.lists(), "ours LISTed once: no relist")

		cancel()
		var wg sync.WaitGroup
		for _, c := range both {
			wg.Go(c.factory.Shutdown)
		}
		wg.Wait()
	})
}
