package reflector

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
)

// requestCounter is a source that answers LISTs and counts them, and
// counts streaming WATCHes (sendInitialEvents=true), refusing none.
type requestCounter struct {
	lists, streams atomic.Int32
}

func (c *requestCounter) list(context.Context, metav1.ListOptions) (runtime.Object, error) {
	c.lists.Add(1)
	return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "5"}}, nil
}

func (c *requestCounter) watch(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
	if o.SendInitialEvents != nil && *o.SendInitialEvents {
		c.streams.Add(1)
	}
	return watch.NewFake(), nil
}

// alwaysOff is a feature registry a program might install in place of
// client-go's (features.ReplaceFeatureGates): every gate is off.
type alwaysOff struct{}

func (alwaysOff) Enabled(clientfeatures.Feature) bool { return false }

// A gate set in code, in client-go's registry, is the one both reflectors
// read: with WatchListClient off, each LISTs its initial state and opens
// no streaming WATCH. Before, ours read only the environment and streamed.
func TestAWatchListClientGateSetInCodeReachesBothReflectors(t *testing.T) {
	for name, switchOff := range map[string]func(t *testing.T){
		// client-go's test helper sets the gate on its registry, and puts
		// it back when the test ends.
		"Set": func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
		},
		// A program that owns its gates replaces client-go's registry.
		"ReplaceFeatureGates": func(t *testing.T) {
			old := clientfeatures.FeatureGates()
			clientfeatures.ReplaceFeatureGates(alwaysOff{})
			t.Cleanup(func() { clientfeatures.ReplaceFeatureGates(old) })
		},
	} {
		t.Run(name, func(t *testing.T) {
			switchOff(t)
			require.False(t, clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient))
			assert.False(t, FeatureGates().Enabled(WatchListClient), "ours reads client-go's registry")
			synctest.Test(t, func(t *testing.T) {
				var ours, theirs requestCounter
				oursR := NewReflectorWithOptions(&ListWatch{ListWithContextFunc: ours.list, WatchFuncWithContext: ours.watch},
					&corev1.Pod{}, store.NewStore(store.MetaNamespaceKeyFunc), ReflectorOptions{})
				theirsR := kcache.NewReflectorWithOptions(&kcache.ListWatch{ListWithContextFunc: theirs.list, WatchFuncWithContext: theirs.watch},
					&corev1.Pod{}, kcache.NewStore(kcache.MetaNamespaceKeyFunc), kcache.ReflectorOptions{})
				assert.False(t, oursR.UsesWatchList())

				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				wg.Go(func() { oursR.RunWithContext(ctx) })
				wg.Go(func() { theirsR.RunWithContext(ctx) })
				synctest.Wait()
				cancel()
				wg.Wait()

				assert.Equal(t, int32(1), theirs.lists.Load(), "client-go LISTed")
				assert.Zero(t, theirs.streams.Load(), "client-go did not stream")
				assert.Equal(t, theirs.lists.Load(), ours.lists.Load(), "ours LISTed")
				assert.Equal(t, theirs.streams.Load(), ours.streams.Load(), "ours did not stream")
			})
		})
	}
	assert.True(t, FeatureGates().Enabled(WatchListClient), "the gate is back at its default")
}
