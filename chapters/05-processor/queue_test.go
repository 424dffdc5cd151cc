package processor

// The queue under the informer: unlock while processing on the RealFIFO
// (kubernetes#103789), one process call at a time, and the span contract's
// drop rule at stop on both queues.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// gatedIndex is an index function that blocks the cache write of the pod
// named name, the first time it is indexed, until gate is closed; entered
// is closed when it starts blocking. It is how a test holds a process call
// (HandleDeltas) in flight: the cache write is part of it.
type gatedIndex struct {
	name          string
	entered, gate chan struct{}
	once          sync.Once
}

func newGatedIndex(name string) *gatedIndex {
	return &gatedIndex{name: name, entered: make(chan struct{}), gate: make(chan struct{})}
}

func (g *gatedIndex) indexers() store.Indexers {
	return store.Indexers{"gate": func(obj any) ([]string, error) {
		if p, ok := obj.(*corev1.Pod); ok && p.Name == g.name {
			g.once.Do(func() {
				close(g.entered)
				<-g.gate
			})
		}
		return nil, nil
	}}
}

// watchedStore wraps the informer's cache as its consumer sees it, and
// checks on every write that it happens inside a process call (blockDeltas
// held) and that no other write is in flight.
type watchedStore struct {
	store.Indexer
	inf          *sharedIndexInformer
	inFlight     atomic.Int32
	overlaps     atomic.Int32
	outsideBlock atomic.Int32
	transactions atomic.Int32
}

func (w *watchedStore) enter() func() {
	if w.inFlight.Add(1) > 1 {
		w.overlaps.Add(1)
	}
	if w.inf.blockDeltas.TryLock() {
		w.inf.blockDeltas.Unlock()
		w.outsideBlock.Add(1)
	}
	return func() { w.inFlight.Add(-1) }
}

func (w *watchedStore) Add(obj any) error    { defer w.enter()(); return w.Indexer.Add(obj) }
func (w *watchedStore) Update(obj any) error { defer w.enter()(); return w.Indexer.Update(obj) }
func (w *watchedStore) Delete(obj any) error { defer w.enter()(); return w.Indexer.Delete(obj) }
func (w *watchedStore) Bookmark(rv string)   { defer w.enter()(); w.Indexer.Bookmark(rv) }
func (w *watchedStore) Replace(list []any, rv string) error {
	defer w.enter()()
	return w.Indexer.Replace(list, rv)
}

func (w *watchedStore) Transaction(txns ...store.Transaction) *store.TransactionError {
	defer w.enter()()
	w.transactions.Add(1)
	return w.Indexer.(store.TransactionStore).Transaction(txns...)
}

// watchStore puts a watchedStore between inf's consumer and its cache;
// call before Run.
func watchStore(inf SharedIndexInformer) *watchedStore {
	s := inf.(*sharedIndexInformer)
	w := &watchedStore{Indexer: s.indexer, inf: s}
	s.consumer.Store = w
	return w
}

// On the RealFIFO (the default), the watch keeps queueing while a process
// call is in flight: the reflector's Add does not wait for HandleDeltas
// (kubernetes#103789, UnlockWhileProcessing). Once released, the events
// queued meanwhile are handed out in a batch, in order; and at no time do
// two process calls write the cache at once, nor does any write happen
// outside blockDeltas.
func TestWatchKeepsQueueingWhileHandleDeltasRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := &scriptedAPI{pods: map[string]*corev1.Pod{}}
		api.create(t, "a")
		gate := newGatedIndex("blocker")
		inf := NewSharedIndexInformerWithOptions(scriptLW{api}, &corev1.Pod{}, SharedIndexInformerOptions{Indexers: gate.indexers()})
		watched := watchStore(inf)
		h := newRecorder()
		_, err := inf.AddEventHandler(h)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); inf.RunWithContext(ctx) }()
		defer func() { cancel(); <-done }()
		synctest.Wait()
		require.True(t, inf.HasSynced())

		api.create(t, "blocker")
		<-gate.entered // HandleDeltas is now in flight, inside the cache write
		const n = 50
		for i := range n {
			api.create(t, fmt.Sprintf("p%02d", i))
		}
		// Idle means every goroutine is durably blocked: the reflector
		// waits on its empty watch channel, so it has queued all n events
		// (it takes the next event only after its Add returned), while the
		// process call still waits on the gate. A reflector stuck on the
		// queue's lock (UnlockWhileProcessing off) is not durably blocked,
		// so with it this Wait never returns and the test fails by its
		// timeout: checked.
		synctest.Wait()
		api.mu.Lock()
		for _, w := range api.watches {
			assert.Zero(t, len(w.ch), "events the reflector has not queued")
		}
		api.mu.Unlock()
		assert.Equal(t, []string{"add ns/a@1 initial=true"}, h.log(), "nothing after the blocked call reached a handler yet")

		close(gate.gate)
		synctest.Wait()
		want := []string{"add ns/a@1 initial=true", "add ns/blocker@2 initial=false"}
		for i := range n {
			want = append(want, fmt.Sprintf("add ns/p%02d@%d initial=false", i, i+3))
		}
		assert.Equal(t, want, h.log(), "every event, in the watch's order")
		assert.Positive(t, watched.transactions.Load(), "the events queued meanwhile were handed out as a batch")
		assert.Zero(t, watched.overlaps.Load(), "two process calls wrote the cache at once")
		assert.Zero(t, watched.outsideBlock.Load(), "a cache write outside blockDeltas")
	})
}

// When the informer stops with deltas still queued, each one's queue wait
// span ends with informer.queue.dropped=true, on both queues, and every
// other root reached HandleDeltas (spancheck.CheckRoots): on the RealFIFO
// the watch events queued behind a process call in flight at the stop, on
// the DeltaFIFO the listed keys behind the batch in flight.
func TestQueuedDeltasAreDroppedAtStopPerContract(t *testing.T) {
	for _, tc := range []struct {
		queue       QueueKind
		watchEvents int
		wantDropped int
		droppedRoot string
	}{
		// The relist is one ReplacedAll entry; the 5 watch events queue
		// behind it (unlocked while processing) and are dropped.
		{RealFIFOQueue, 5, 5, "ListAndWatch watch"},
		// DeltaFIFO.Pop holds the queue's lock while processing, so no
		// watch event could be queued meanwhile (the reflector would wait
		// on the lock); the first batch is 100 of the 300 listed keys, the
		// other 200 are dropped.
		{DeltaFIFOQueue, 0, 200, "ListAndWatch list"},
	} {
		t.Run(tc.queue.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := tracetest.NewSpanRecorder()
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
				api := &scriptedAPI{pods: map[string]*corev1.Pod{}}
				for i := range 300 {
					api.create(t, fmt.Sprintf("p%03d", i))
				}
				gate := newGatedIndex("p000")
				inf := NewSharedIndexInformerWithOptions(scriptLW{api}, &corev1.Pod{}, SharedIndexInformerOptions{
					Name: "pods", Indexers: gate.indexers(), TracerProvider: tp, Queue: tc.queue})
				_, err := inf.AddEventHandler(newRecorder())
				require.NoError(t, err)
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { defer close(done); inf.RunWithContext(ctx) }()
				<-gate.entered
				synctest.Wait() // the reflector is watching
				for i := range tc.watchEvents {
					api.create(t, fmt.Sprintf("x%d", i))
				}
				synctest.Wait()
				cancel()
				close(gate.gate)
				<-done

				roots := checkContract(t, rec.Ended())
				require.Len(t, roots, 300+tc.watchEvents, "a root per listed object and watch event")
				dropped := 0
				for _, rc := range roots {
					if rc.Dropped {
						dropped++
						assert.Equal(t, tc.droppedRoot, rc.Root.Name, rc.Root.Attr(tracing.KeyObjectKey))
					}
				}
				assert.Equal(t, tc.wantDropped, dropped, "roots whose queue wait ended as dropped at stop")
			})
		})
	}
}
