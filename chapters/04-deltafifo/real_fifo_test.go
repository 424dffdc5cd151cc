package deltafifo

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
)

// panicOf runs f and returns what it panicked with ("" if nothing).
func panicOf(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// Every combination of the four options that constrain each other: ours
// must accept exactly what client-go accepts, and refuse the rest with the
// same message.
func TestRealFIFOOptionRulesAsClientGo(t *testing.T) {
	accepted := 0
	for combo := range 16 {
		known, atomicEvents, unlock, bookmarks := combo&1 != 0, combo&2 != 0, combo&4 != 0, combo&8 != 0
		ours := RealFIFOOptions{AtomicEvents: atomicEvents, UnlockWhileProcessing: unlock, EmitDeltaTypeBookmark: bookmarks}
		theirs := kcache.RealFIFOOptions{AtomicEvents: atomicEvents, UnlockWhileProcessing: unlock, EmitDeltaTypeBookmark: bookmarks}
		if known {
			ours.KnownObjects = store.NewStore(store.MetaNamespaceKeyFunc)
			theirs.KnownObjects = kcache.NewStore(kcache.MetaNamespaceKeyFunc)
		}
		got := panicOf(func() { NewRealFIFOWithOptions(ours) })
		want := panicOf(func() { kcache.NewRealFIFOWithOptions(theirs) })
		assert.Equal(t, want, got, "known=%v atomic=%v unlock=%v bookmarks=%v", known, atomicEvents, unlock, bookmarks)
		if want == "" {
			accepted++
		}
	}
	// Per-event with known objects; atomic without them, with any of
	// unlock and bookmarks.
	assert.Equal(t, 5, accepted)
}

// podN is a pod with a distinct key per i.
func podN(i int) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p" + strconv.Itoa(i), ResourceVersion: strconv.Itoa(i + 1)}}
}

// batchSizes pops a queue empty with PopBatch and returns the size of each
// call and whether it was initial ("1000i" or "3").
func batchSizes(t *testing.T, popBatch func(func(int, bool) error) error, n int) []string {
	t.Helper()
	var out []string
	for popped := 0; popped < n; {
		require.NoError(t, popBatch(func(size int, initial bool) error {
			s := strconv.Itoa(size)
			if initial {
				s += "i"
			}
			out = append(out, s)
			popped += size
			return nil
		}))
	}
	return out
}

// The batch size limit (1,000) and the end of the initial list bound a
// batch exactly as in client-go: a relist of 1,500 pops as 1,000 + 500
// initial entries, then 2,100 distinct watch events as 1,000 + 1,000 + 100.
// The harness's sequences are too short to reach either bound.
func TestRealFIFOBatchBoundsAsClientGo(t *testing.T) {
	const listed, watched = 1500, 2100
	list := make([]any, listed)
	for i := range list {
		list[i] = podN(i)
	}
	ours := NewRealFIFO(store.MetaNamespaceKeyFunc, store.NewStore(store.MetaNamespaceKeyFunc), nil)
	theirs := kcache.NewRealFIFOWithOptions(kcache.RealFIFOOptions{KnownObjects: kcache.NewStore(kcache.MetaNamespaceKeyFunc)})
	require.NoError(t, ours.Replace(list, "1"))
	require.NoError(t, theirs.Replace(list, "1"))
	for i := range watched {
		require.NoError(t, ours.Add(podN(listed+i)))
		require.NoError(t, theirs.Add(podN(listed+i)))
	}
	got := batchSizes(t, func(f func(int, bool) error) error {
		return ours.PopBatch(func(d []Delta, initial bool) error { return f(len(d), initial) },
			func(_ any, initial bool) error { return f(1, initial) })
	}, listed+watched)
	want := batchSizes(t, func(f func(int, bool) error) error {
		return theirs.PopBatch(func(d []kcache.Delta, initial bool) error { return f(len(d), initial) },
			func(_ any, initial bool) error { return f(1, initial) })
	}, listed+watched)
	assert.Equal(t, want, got)
	assert.Equal(t, []string{"1000i", "500i", "1000", "1000", "100"}, got)
}

// An entry whose key can no longer be computed (a key function that
// changed its mind, as in upstream's TestRealFIFO_PopBrokenItemsInBatch)
// ends a batch and goes with it, or is popped alone when it is first; the
// same on both sides.
func TestRealFIFOBrokenKeyEndsBatchAsClientGo(t *testing.T) {
	var broken sync.Map
	keyFunc := func(obj any) (string, error) {
		if _, ok := broken.Load(obj); ok {
			return "", errors.New("key function refuses it now")
		}
		return store.MetaNamespaceKeyFunc(obj)
	}
	pods := []*corev1.Pod{podN(0), podN(1), podN(2), podN(3), podN(4), podN(5)}
	ours := NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: keyFunc, AtomicEvents: true})
	theirs := kcache.NewRealFIFOWithOptions(kcache.RealFIFOOptions{KeyFunction: keyFunc, AtomicEvents: true})
	for _, p := range pods {
		require.NoError(t, ours.Add(p))
		require.NoError(t, theirs.Add(p))
	}
	broken.Store(pods[0], true)
	broken.Store(pods[3], true)
	broken.Store(pods[4], true)
	describe := func(kind string, objs []any) string {
		s := kind
		for _, o := range objs {
			s += " " + o.(*corev1.Pod).Name
		}
		return s
	}
	var got, want []string
	for range 4 {
		require.NoError(t, ours.PopBatch(func(d []Delta, _ bool) error {
			objs := make([]any, len(d))
			for i := range d {
				objs[i] = d[i].Object
			}
			got = append(got, describe("batch", objs))
			return nil
		}, func(obj any, _ bool) error {
			got = append(got, describe("single", []any{obj.(Deltas)[0].Object}))
			return nil
		}))
		require.NoError(t, theirs.PopBatch(func(d []kcache.Delta, _ bool) error {
			objs := make([]any, len(d))
			for i := range d {
				objs[i] = d[i].Object
			}
			want = append(want, describe("batch", objs))
			return nil
		}, func(obj any, _ bool) error {
			want = append(want, describe("single", []any{obj.(kcache.Deltas)[0].Object}))
			return nil
		}))
	}
	assert.Equal(t, want, got)
	assert.Equal(t, []string{"single p0", "batch p1 p2 p3", "single p4", "single p5"}, got)
}

// The lock is released around the process call exactly when upstream's
// whileProcessing_locked releases it: with UnlockWhileProcessing and fewer
// than two batches' worth (2,000) of entries left after the pop. Above
// that, a reflector that outruns the consumer is held back instead of
// growing the queue without bound. (White-box: the differential harness
// checks the unlocked case against client-go, but cannot queue 2,000.)
func TestRealFIFOUnlocksBelowTwoBatchesOnly(t *testing.T) {
	for _, tc := range []struct {
		batch      bool
		queued     int
		unlock     bool
		wantLocked bool
	}{
		{queued: 2000, unlock: true, wantLocked: false},              // 1,999 left
		{queued: 2001, unlock: true, wantLocked: true},               // 2,000 left
		{batch: true, queued: 2999, unlock: true, wantLocked: false}, // a batch of 1,000, 1,999 left
		{batch: true, queued: 3000, unlock: true, wantLocked: true},  // 2,000 left
		{queued: 1, unlock: false, wantLocked: true},
		{batch: true, queued: 2, unlock: false, wantLocked: true},
	} {
		t.Run(fmt.Sprintf("batch=%v,queued=%d,unlock=%v", tc.batch, tc.queued, tc.unlock), func(t *testing.T) {
			f := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: tc.unlock})
			for i := range tc.queued {
				require.NoError(t, f.Add(podN(i)))
			}
			locked := func() bool {
				if f.lock.TryLock() {
					f.lock.Unlock()
					return false
				}
				return true
			}
			calls := 0
			check := func() {
				calls++
				assert.Equal(t, tc.wantLocked, locked())
			}
			if tc.batch {
				require.NoError(t, f.PopBatch(func([]Delta, bool) error { check(); return nil },
					func(any, bool) error { check(); return nil }))
			} else {
				_, err := f.Pop(func(any, bool) error { check(); return nil })
				require.NoError(t, err)
			}
			require.Equal(t, 1, calls)
			require.False(t, locked(), "the lock is retaken, then released, after processing")
			require.NoError(t, f.checkInvariant())
		})
	}
}

// kubernetes#103789: with the lock held while handlers run, a slow handler
// blocks the reflector, and the queue never grows while it waits. With
// UnlockWhileProcessing the watch keeps queueing while a process func is
// blocked, and those entries are popped next, in order.
func TestRealFIFOQueuesWhileProcessing(t *testing.T) {
	f := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: true})
	require.NoError(t, f.Add(mk("a", "1")))
	entered, release := make(chan struct{}), make(chan struct{})
	popped := make(chan error, 1)
	go func() {
		_, err := f.Pop(func(any, bool) error {
			close(entered)
			<-release
			return nil
		})
		popped <- err
	}()
	<-entered
	// The reflector's writes, while the handler is blocked. Each runs on
	// its own goroutine so that a queue that kept its lock fails the test
	// instead of hanging it; the timeout is never reached otherwise.
	for _, write := range []func() error{
		func() error { return f.Add(mk("b", "2")) },
		func() error { return f.Update(mk("a", "3")) },
		func() error { return f.Delete(mk("b", "4")) },
		func() error { return f.Replace([]any{mk("a", "5")}, "5") },
		func() error { return f.Resync() },
	} {
		done := make(chan error, 1)
		go func() { done <- write() }()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			close(release)
			t.Fatal("a write blocked while the process func ran: the queue kept its lock")
		}
	}
	close(release)
	require.NoError(t, <-popped)

	var got []string
	for range 5 {
		_, err := f.Pop(func(obj any, _ bool) error {
			d := obj.(Deltas)[0]
			s := string(d.Type)
			if p, ok := d.Object.(*corev1.Pod); ok {
				s += " " + p.Name + "@" + p.ResourceVersion
			}
			got = append(got, s)
			return nil
		})
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"Added b@2", "Updated a@3", "Deleted b@4", "ReplacedAll", "SyncAll"}, got)
}

// Two consumers popping at once never run two process calls at the same
// time: while one runs with the lock released, the other waits. client-go
// leaves this to the caller (its Pop says it expects a single-threaded
// consumer) and does run both at once, which the second half shows, so the
// first half can fail.
func TestRealFIFONeverRunsTwoProcessCallsAtOnce(t *testing.T) {
	type queue struct {
		add func(any) error
		pop func(func(any, bool) error) error
	}
	// run builds the queue inside the bubble (so that waiting on its
	// condition variable counts as blocked) and returns the most process
	// calls that were running at once.
	run := func(t *testing.T, newQueue func() queue) (maxRunning int32) {
		synctest.Test(t, func(t *testing.T) {
			q := newQueue()
			require.NoError(t, q.add(mk("a", "1")))
			require.NoError(t, q.add(mk("b", "2")))
			var running, most atomic.Int32
			release := make(chan struct{})
			process := func(any, bool) error {
				n := running.Add(1)
				if n > most.Load() {
					most.Store(n)
				}
				<-release
				running.Add(-1)
				return nil
			}
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() { _ = q.pop(process) })
			}
			synctest.Wait() // both consumers are blocked: in process, or waiting for it
			maxRunning = most.Load()
			close(release)
			wg.Wait()
		})
		return maxRunning
	}

	assert.Equal(t, int32(1), run(t, func() queue {
		f := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: true})
		return queue{f.Add, func(p func(any, bool) error) error { _, err := f.Pop(p); return err }}
	}), "ours: one process call at a time")
	assert.Equal(t, int32(2), run(t, func() queue {
		f := kcache.NewRealFIFOWithOptions(kcache.RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: true})
		return queue{f.Add, func(p func(any, bool) error) error { _, err := f.Pop(p); return err }}
	}), "client-go runs both at once when two goroutines pop")
}

// HasSynced does not turn true while the last entry of the initial list is
// still being processed, even with the lock released (it drops the count
// only after the process call returns), and isInInitialList is true for it.
func TestRealFIFOHasSyncedWaitsForTheLastInitialProcessCall(t *testing.T) {
	f := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: true})
	require.NoError(t, f.Replace([]any{mk("a", "1")}, "1"))
	require.False(t, f.HasSynced())
	_, err := f.Pop(func(obj any, initial bool) error {
		assert.True(t, initial)
		assert.False(t, f.HasSynced(), "still processing the initial list") // would deadlock if the lock were held
		return nil
	})
	require.NoError(t, err)
	assert.True(t, f.HasSynced())
}

// Close lets the consumer drain what is queued, then Pop and PopBatch
// return ErrFIFOClosed; a Pop waiting on an empty queue is woken by Close.
func TestRealFIFOCloseDrainsThenReportsClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true})
		errs := make(chan error, 1)
		go func() {
			_, err := f.Pop(func(any, bool) error { return nil })
			errs <- err
		}()
		synctest.Wait() // Pop is waiting on the empty queue
		f.Close()
		require.ErrorIs(t, <-errs, ErrFIFOClosed)
		assert.True(t, f.IsClosed())
	})

	f := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true})
	require.NoError(t, f.Add(mk("a", "1")))
	f.Close()
	_, err := f.Pop(func(any, bool) error { return nil })
	require.NoError(t, err, "what was queued before Close is still handed out")
	require.ErrorIs(t, f.PopBatch(func([]Delta, bool) error { return nil }, func(any, bool) error { return nil }), ErrFIFOClosed)
}

// After endQueuedAsDropped nothing is handed out again, even what was
// queued before it, and a late write is not kept.
func TestRealFIFODroppedQueueNeverPopsAgain(t *testing.T) {
	f := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, EmitDeltaTypeBookmark: true})
	require.NoError(t, f.Add(mk("a", "1")))
	require.NoError(t, f.Replace([]any{mk("b", "2")}, "2"))
	require.NoError(t, f.Bookmark("3"))
	f.endQueuedAsDropped()
	require.NoError(t, f.Add(mk("c", "4")))
	called := false
	_, err := f.Pop(func(any, bool) error { called = true; return nil })
	require.ErrorIs(t, err, ErrFIFOClosed)
	require.ErrorIs(t, f.PopBatch(func([]Delta, bool) error { called = true; return nil }, func(any, bool) error { called = true; return nil }), ErrFIFOClosed)
	assert.False(t, called)
	assert.True(t, f.IsClosed())
	require.NoError(t, f.checkInvariant())
}

// The queue's array is reused: popping it empty starts again at the front,
// and a long-lived backlog slides forward instead of growing without bound.
// Order is what the differential test proves; this proves the memory.
func TestRealFIFOReusesItsArray(t *testing.T) {
	f := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true})
	noop := func(any, bool) error { return nil }
	// A backlog of 10 that never empties, for 10,000 entries.
	for i := range 10 {
		require.NoError(t, f.Add(podN(i)))
	}
	for i := 10; i < 10_000; i++ {
		require.NoError(t, f.Add(podN(i)))
		_, err := f.Pop(noop)
		require.NoError(t, err)
		require.NoError(t, f.checkInvariant())
	}
	f.lock.Lock()
	capacity := cap(f.items)
	f.lock.Unlock()
	assert.LessOrEqual(t, capacity, 64, "the array stays near the backlog's size")
	for range 10 {
		_, err := f.Pop(noop)
		require.NoError(t, err)
	}
	f.lock.Lock()
	defer f.lock.Unlock()
	assert.Equal(t, 0, f.head)
	assert.Empty(t, f.items)
}
