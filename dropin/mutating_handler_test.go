package dropin

// client-go's TestUpdate (tools/cache/controller_test.go), adapted to run
// the same script on client-go's informer and on ours: a handler that sees
// an object reach its final label deletes it through the fake source, and
// the source sets the deleted object's resourceVersion: the handler writes
// to an object the informer handed it. Nothing in the informer may read an
// object's fields after handing it on, or the race detector fails this
// test (it did, through chapter 3's watch handling, until the reflector
// read the event's resourceVersion before the store had the object).

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	fcache "k8s.io/client-go/tools/cache/testing"
)

// listOnlyLW is a ListWatch over a source that cannot stream an initial
// state, as client-go's own tests wrap the fake source.
type listOnlyLW struct{ *cache.ListWatch }

func (listOnlyLW) IsWatchListSemanticsUnSupported() bool { return true }

type newInformerFunc func(cache.ListerWatcher, runtime.Object, time.Duration, cache.Indexers) cache.SharedIndexInformer

// runUpdateScript runs client-go's TestUpdate script on the informer newInf
// builds and returns the transitions the handler saw that the script does
// not allow (none, on client-go's).
func runUpdateScript(t *testing.T, newInf newInformerFunc, threads int) []string {
	source := fcache.NewFakeControllerSource()
	type pair struct{ from, to string }
	allowed := map[pair]bool{{"from", "to"}: true, {"to", "to"}: true, {"from", "from"}: true}
	pod := func(name, check string, final bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"check": check}}}
		if final {
			p.Labels["final"] = "true"
		}
		return p
	}

	var (
		mu  sync.Mutex
		bad []string
	)
	var deleted sync.WaitGroup
	deleted.Add(threads)
	watching := make(chan struct{})
	var once sync.Once
	inf := newInf(listOnlyLW{&cache.ListWatch{
		ListWithContextFunc: func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) { return source.List(o) },
		WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
			w, err := source.Watch(o)
			once.Do(func() { close(watching) })
			return w, err
		},
	}}, &corev1.Pod{}, 0, cache.Indexers{})
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			o, n := oldObj.(*corev1.Pod), newObj.(*corev1.Pod)
			if from, to := o.Labels["check"], n.Labels["check"]; !allowed[pair{from, to}] {
				mu.Lock()
				bad = append(bad, fmt.Sprintf("%s: %q -> %q", n.Name, from, to))
				mu.Unlock()
			}
			if n.Labels["final"] == "true" {
				source.Delete(n) // sets n's resourceVersion
			}
		},
		DeleteFunc: func(any) { deleted.Done() },
	})
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go inf.RunWithContext(ctx)
	<-watching

	var writers sync.WaitGroup
	for i := range threads {
		writers.Go(func() {
			name := fmt.Sprintf("a-%d", i)
			source.Add(pod(name, "from", false))
			source.Modify(pod(name, "to", true))
		})
	}
	writers.Wait()
	done := make(chan struct{})
	go func() { deleted.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("not every object reached its delete within a minute")
	}
	cancel()
	mu.Lock()
	defer mu.Unlock()
	return bad
}

func TestClientGoUpdateScriptWithAHandlerThatWritesToItsObject(t *testing.T) {
	for _, impl := range []struct {
		name string
		new  newInformerFunc
	}{
		{"client-go", func(lw cache.ListerWatcher, obj runtime.Object, resync time.Duration, ix cache.Indexers) cache.SharedIndexInformer {
			return cache.NewSharedIndexInformer(lw, obj, resync, ix)
		}},
		{"dropin", NewSharedIndexInformer},
	} {
		t.Run(impl.name, func(t *testing.T) {
			// Several rounds: under -race each is a fresh chance to catch a
			// read that races the handler's write.
			for range 5 {
				require.Empty(t, runUpdateScript(t, impl.new, 3))
			}
		})
	}
}
