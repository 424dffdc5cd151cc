package dropin

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// emptyLW lists nothing and watches until stopped.
type emptyLW struct{}

func (emptyLW) List(metav1.ListOptions) (kruntime.Object, error) {
	return &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, nil
}
func (emptyLW) Watch(metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil }

// IsWatchListSemanticsUnSupported: this ListerWatcher cannot stream, so the
// reflector LISTs (as with a fake client) rather than wait for a bookmark.
func (emptyLW) IsWatchListSemanticsUnSupported() bool { return true }

func listedInformers() []*Informer {
	infs, _ := live.snapshot()
	var out []*Informer
	for _, e := range infs {
		out = append(out, e.inf)
	}
	return out
}

func listedQueues() []string {
	_, qs := live.snapshot()
	var out []string
	for _, q := range qs {
		out = append(out, q.name)
	}
	return out
}

// An informer is listed from the moment it is built until its Run returns;
// then it is gone.
func TestRegistryListsAnInformerUntilItStops(t *testing.T) {
	inf := NewSharedIndexInformer(emptyLW{}, &corev1.ConfigMap{}, 0, cache.Indexers{}).(*Informer)
	assert.Contains(t, listedInformers(), inf, "built, not yet run")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	require.True(t, cache.WaitForCacheSync(ctx.Done(), inf.HasSynced))
	assert.Contains(t, listedInformers(), inf, "running")
	cancel()
	<-done
	assert.NotContains(t, listedInformers(), inf, "stopped")
}

// A traced queue of each kind is listed, by its name, until it is shut down.
func TestRegistryListsATracedQueueUntilShutDown(t *testing.T) {
	rl := NewTracedQueue("reg-rl", workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()))
	dl := NewTracedDelayingQueue("reg-delaying", workqueue.NewTypedDelayingQueue[string]())
	pl := NewTracedPlainQueue("reg-plain", workqueue.NewTyped[string]())
	for _, n := range []string{"reg-rl", "reg-delaying", "reg-plain"} {
		assert.Contains(t, listedQueues(), n)
	}
	rl.ShutDown()
	dl.ShutDownWithDrain()
	assert.NotContains(t, listedQueues(), "reg-rl")
	assert.NotContains(t, listedQueues(), "reg-delaying")
	assert.Contains(t, listedQueues(), "reg-plain")
	pl.ShutDown()
	assert.NotContains(t, listedQueues(), "reg-plain")
}

// The registry does not keep alive what nobody else holds: informers built
// and never run, and queues dropped without ShutDown, leave once collected.
// Without the weak pointers every one of them would stay listed (and
// held) for the life of the process.
func TestRegistryHoldsNothingAlive(t *testing.T) {
	runtime.GC()
	live.snapshot() // prune what earlier tests left
	infs0, qs0 := live.size()
	func() {
		for i := range 50 {
			NewSharedIndexInformer(emptyLW{}, &corev1.ConfigMap{}, 0, cache.Indexers{})
			NewTracedQueue(fmt.Sprint("dropped-", i), workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()))
		}
	}()
	infs, qs := live.size()
	require.Equal(t, infs0+50, infs, "listed while alive")
	require.Equal(t, qs0+50, qs)
	runtime.GC()
	got, names := live.snapshot()
	infs, qs = live.size()
	assert.LessOrEqual(t, infs, infs0, "informers nobody holds are gone")
	assert.LessOrEqual(t, qs, qs0, "queues nobody holds are gone")
	assert.Len(t, got, infs)
	assert.False(t, slices.ContainsFunc(names, func(q liveQueueStats) bool { return q.name == "dropped-0" }))
}

// Informers and queues built, read and stopped on many goroutines at once:
// the race detector's test of the registry's lock.
func TestRegistryConcurrentUse(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 20 {
				q := NewTracedPlainQueue(fmt.Sprint("conc-", i, "-", j), workqueue.NewTyped[string]())
				inf := NewSharedIndexInformer(emptyLW{}, &corev1.ConfigMap{}, 0, cache.Indexers{}).(*Informer)
				q.Add("k")
				readProcess()
				q.ShutDown()
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				inf.RunWithContext(ctx)
			}
		})
	}
	wg.Wait()
	for _, n := range listedQueues() {
		assert.NotRegexp(t, `^conc-`, n, "every queue was shut down")
	}
}
