package dropin

import (
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// statsCounter is a queue for the registry that counts its Stats calls.
type statsCounter struct{ reads atomic.Int64 }

func (q *statsCounter) Stats() QueueStats  { q.reads.Add(1); return QueueStats{Depth: 1} }
func (q *statsCounter) ShuttingDown() bool { return false }

// TestRegistryReadsAQueueOnlyFromItsBubble: a queue made inside a
// testing/synctest bubble is listed, and its Stats called, only by a
// reader in that bubble; one made outside, only by readers outside. A
// reader elsewhere does not call its Stats at all: controller-runtime's
// priority queue answers it by signalling a channel of the bubble, and the
// runtime ends the process when a goroutine outside does that (see
// TestLiveViewLeavesABubblesPriorityQueueAlone in dropin/crqueue, which
// died so before the fix).
func TestRegistryReadsAQueueOnlyFromItsBubble(t *testing.T) {
	outside := ShowInLiveView(&statsCounter{}, "made-outside", "test")
	var inside *statsCounter
	synctest.Test(t, func(t *testing.T) {
		inside = ShowInLiveView(&statsCounter{}, "made-in-a-bubble", "test")
		require.Contains(t, listedQueues(), "made-in-a-bubble", "read from its own bubble")
		require.NotContains(t, listedQueues(), "made-outside", "a queue of no bubble, read from one")
	})
	require.Equal(t, int64(2), inside.reads.Load(), "its bubble read it twice")
	require.Zero(t, outside.reads.Load(), "the bubble never read the queue made outside")
	require.Contains(t, listedQueues(), "made-outside")
	require.NotContains(t, listedQueues(), "made-in-a-bubble", "read from outside its bubble")
	require.Equal(t, int64(2), inside.reads.Load(), "its Stats not called from outside")
	require.Equal(t, int64(2), outside.reads.Load())
}

// TestLiveViewHandlerInABubbleStartsNoSampler: the first LiveViewHandler
// made inside a synctest bubble (a controller author's test of a page)
// must not start the process's history sampler there. Its goroutine would
// belong to the bubble and wait on the bubble's ticker for the life of the
// process: synctest.Test panics when its function returns and such a
// goroutine remains ("main bubble goroutine has exited but blocked
// goroutines remain"), as it did here before the fix.
func TestLiveViewHandlerInABubbleStartsNoSampler(t *testing.T) {
	historySampler.mu.Lock()
	wasStarted := historySampler.started
	historySampler.started = false
	historySampler.mu.Unlock()
	defer func() {
		historySampler.mu.Lock()
		historySampler.started = historySampler.started || wasStarted
		historySampler.mu.Unlock()
	}()
	synctest.Test(t, func(t *testing.T) { _ = LiveViewHandler() })
	historySampler.mu.Lock()
	defer historySampler.mu.Unlock()
	require.False(t, historySampler.started, "not started from inside a bubble")
}

// TestRegistryListsAnInformerOnlyInItsBubble: an informer built inside a
// synctest bubble is listed only to a reader in that bubble, one built
// outside only to readers outside. Reading it from elsewhere would be
// safe, but its times are on its bubble's clock, which starts in the year
// 2000: a page outside would date its relist so.
func TestRegistryListsAnInformerOnlyInItsBubble(t *testing.T) {
	outside := NewSharedIndexInformer(emptyLW{}, &corev1.ConfigMap{}, 0, cache.Indexers{}).(*Informer)
	var inside *Informer
	synctest.Test(t, func(t *testing.T) {
		inside = NewSharedIndexInformer(emptyLW{}, &corev1.ConfigMap{}, 0, cache.Indexers{}).(*Informer)
		require.Contains(t, listedInformers(), inside, "listed in its own bubble")
		require.NotContains(t, listedInformers(), outside, "an informer of no bubble, listed in one")
	})
	require.Contains(t, listedInformers(), outside)
	require.NotContains(t, listedInformers(), inside, "listed outside its bubble")
}
