package scalegen

import (
	"runtime"
	"runtime/metrics"
	"slices"
	"time"
)

var heapSamples = []metrics.Sample{
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/gc/heap/live:bytes"},
	{Name: "/gc/heap/allocs:objects"},
	{Name: "/gc/heap/allocs:bytes"},
}

// ReadHeap reads runtime/metrics: the heap's object bytes now (live objects
// and garbage not yet swept), the live heap the last GC marked, and the
// heap allocations (objects and bytes) since the process started.
func ReadHeap() (objects, live, allocs, allocBytes uint64) {
	s := slices.Clone(heapSamples)
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64(), s[3].Value.Uint64()
}

// LiveHeap forces two GCs (the second also frees what the first's
// finalizers released) and returns the heap's object bytes: what is live.
func LiveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	o, _, _, _ := ReadHeap()
	return o
}

// HeapSampler records, while it runs, the largest heap (object bytes, read
// every 2 ms) and the largest live heap a GC marked.
type HeapSampler struct {
	stop, done chan struct{}
	peak, live uint64
}

// StartHeapSampler starts sampling; End stops it.
func StartHeapSampler() *HeapSampler {
	sm := &HeapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(sm.done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			o, l, _, _ := ReadHeap()
			sm.peak, sm.live = max(sm.peak, o), max(sm.live, l)
			select {
			case <-sm.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return sm
}

// End stops the sampler and returns the largest heap sampled and the
// largest live heap marked by a GC while it ran.
func (sm *HeapSampler) End() (peak, peakLive uint64) {
	close(sm.stop)
	<-sm.done
	o, l, _, _ := ReadHeap()
	return max(sm.peak, o), max(sm.live, l)
}
