package store

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConcurrentReadersAndWriters is meant for -race: writers and readers of
// every method run at once. At the end the contents must be exactly what the
// writers left (each writer owns its keys, so the outcome is known) and the
// index invariant must hold.
func TestConcurrentReadersAndWriters(t *testing.T) {
	idx := newPodIndexer()
	const writers, perWriter = 4, 300
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			ns := fmt.Sprintf("ns%d", w)
			for i := range perWriter {
				name := fmt.Sprintf("p%d", i%50)
				node := fmt.Sprintf("n%d", i%3)
				rv := fmt.Sprint(i)
				switch i % 3 {
				case 0, 1:
					assert.NoError(t, idx.Update(pod(ns, name, rv, node, "s"+node)))
				case 2:
					assert.NoError(t, idx.Delete(pod(ns, name, rv, node)))
				}
			}
		})
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 3 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = idx.List()
				_, _ = idx.ByIndex("node", "n1")
				_, _ = idx.IndexKeys("secret", "sn2")
				_, _ = idx.Index(NamespaceIndex, pod("ns1", "", "", ""))
				_ = idx.ListIndexFuncValues("node")
				_, _, _ = idx.GetByKey("ns0/p1")
				_ = idx.GetIndexers()
				_ = idx.LastStoreSyncResourceVersion()
			}
		})
	}
	// A late index, added while writers run.
	require.NoError(t, idx.AddIndexers(Indexers{"late": byNode}))
	wg.Wait()
	close(stop)
	readers.Wait()

	// Replay one writer's sequence to know the final set of keys.
	want := map[string]bool{}
	for i := range perWriter {
		name := fmt.Sprintf("p%d", i%50)
		want[name] = i%3 != 2
	}
	var wantKeys []string
	for w := range writers {
		for name, present := range want {
			if present {
				wantKeys = append(wantKeys, fmt.Sprintf("ns%d/%s", w, name))
			}
		}
	}
	assert.ElementsMatch(t, wantKeys, idx.ListKeys())
	checkIndexInvariant(t, idx.(*cache).cacheStorage.(*threadSafeMap))
}
