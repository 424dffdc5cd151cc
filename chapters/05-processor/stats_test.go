package processor

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// gatedHandler blocks every call until the gate is closed.
type gatedHandler struct{ gate chan struct{} }

func (h gatedHandler) OnAdd(any, bool)   { <-h.gate }
func (h gatedHandler) OnUpdate(any, any) { <-h.gate }
func (h gatedHandler) OnDelete(any)      { <-h.gate }

// TestReadStats: the counters follow the informer's own state. A blocked
// handler's notifications are seen waiting (one in the handler, one offered
// on nextCh, the rest pending in the ring buffer) while the other listener
// has handled them all; once released, every call is counted.
func TestReadStats(t *testing.T) {
	for _, q := range []QueueKind{RealFIFOQueue, DeltaFIFOQueue} {
		t.Run(q.String(), func(t *testing.T) {
			srv, inf := newInformer(t, 0)
			inf.(*sharedIndexInformer).queueKind = q
			st, err := ReadStats(inf)
			require.NoError(t, err)
			assert.False(t, st.Started)
			assert.Equal(t, q, st.Queue)

			fast := newRecorder()
			gate := make(chan struct{})
			_, err = inf.AddEventHandler(fast)
			require.NoError(t, err)
			_, err = inf.AddEventHandler(gatedHandler{gate})
			require.NoError(t, err)
			runInformer(t, inf)
			// Released at the latest by cleanup, before the informer stops
			// (cleanups run last first), so a failed wait cannot hang it.
			release := sync.OnceFunc(func() { close(gate) })
			t.Cleanup(release)
			const n = 20
			for i := range n {
				_, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("p", i)}})
				require.NoError(t, err)
			}
			testutil.Eventually(t, "the fast listener has every pod and the gated one holds n-2", func() bool {
				st, _ = ReadStats(inf)
				return len(st.Listeners) == 2 && st.Listeners[0].Calls == n && st.Listeners[1].AddCh+st.Listeners[1].Pending == n-2
			})
			assert.True(t, st.Started)
			assert.Equal(t, uint64(n), st.Distributed)
			assert.Equal(t, n, st.Cached)
			assert.Equal(t, 0, st.QueueLen)
			assert.Equal(t, srv.ResourceVersion(), st.LastSyncResourceVersion)
			assert.Equal(t, uint64(0), st.Listeners[1].Calls, "the gated handler has not returned yet")
			assert.Contains(t, st.Listeners[0].Name, "#0")
			assert.Contains(t, st.Listeners[1].Name, "gatedHandler#1")

			release()
			testutil.Eventually(t, "the gated listener has handled every pod", func() bool {
				st, _ = ReadStats(inf)
				return st.Listeners[1].Calls == n && st.Listeners[1].Pending == 0
			})
			l := st.Listeners[1]
			assert.Positive(t, l.MaxHandlerTime)
			assert.LessOrEqual(t, l.MeanHandlerTime(), l.MaxHandlerTime)
			assert.Equal(t, l.HandlerTime/n, l.MeanHandlerTime())
		})
	}
	_, err := ReadStats(nil)
	assert.Error(t, err, "an informer of another package is refused")
}

// TestReadStatsNeverShowsAListenerAheadOfDistribute polls ReadStats as fast
// as it can while a burst of updates flows through two listeners: no
// snapshot may show a listener with more handler calls than distribute has
// handed out. (ReadStats once read distribute's count first and the
// listeners last, and TestReadStats saw a snapshot with every call made and
// Distributed still 0.)
func TestReadStatsNeverShowsAListenerAheadOfDistribute(t *testing.T) {
	srv, inf := newInformer(t, 0)
	for range 2 {
		_, err := inf.AddEventHandler(newRecorder())
		require.NoError(t, err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	_, err := srv.Create(pod)
	require.NoError(t, err)
	runInformer(t, inf)
	testutil.Eventually(t, "synced", inf.HasSynced)
	const n = 2000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			pod.Labels = map[string]string{"i": fmt.Sprint(i)}
			if _, err := srv.Update(pod); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	polls, ahead := 0, 0
	var first InformerStats
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		st, err := ReadStats(inf)
		require.NoError(t, err)
		polls++
		for _, l := range st.Listeners {
			if l.Calls > st.Distributed {
				if ahead == 0 {
					first = st
				}
				ahead++
			}
		}
	}
	var last InformerStats
	if !assert.Eventually(t, func() bool {
		last, _ = ReadStats(inf)
		return last.Distributed == n+1 && last.Listeners[0].Calls == n+1 && last.Listeners[1].Calls == n+1
	}, 20*time.Second, 2*time.Millisecond, "every update handled") {
		t.Fatalf("the informer ended at %+v", last)
	}
	assert.Zero(t, ahead, "%d of %d snapshots showed a listener ahead of distribute; the first: %+v", ahead, polls, first)
}

// ReadStats receives from no channel: an informer built inside a synctest
// bubble (a user's unit test) and read from outside it (a metrics
// collection, a live-view poll) is read, where a receive from one of its
// listeners' channels would end the process ("receive on synctest channel
// from outside bubble"). Synced comes from a flag set as the listener's
// channel is closed; both are checked, inside the bubble, to agree.
func TestReadStatsReadsAnInformerOfAnotherBubble(t *testing.T) {
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	var never SharedIndexInformer // built and given a handler, never run
	synctest.Test(t, func(t *testing.T) {
		never = NewSharedIndexInformer(newInProcessLW(srv), &corev1.Pod{}, 0, nil)
		neverReg, err := never.AddEventHandler(ResourceEventHandlerFuncs{})
		require.NoError(t, err)
		st, err := ReadStats(never)
		require.NoError(t, err)
		require.Len(t, st.Listeners, 1)
		assert.Equal(t, neverReg.HasSynced(), st.Listeners[0].Synced, "never run")

		ran := NewSharedIndexInformer(newInProcessLW(srv), &corev1.Pod{}, 0, nil)
		reg, err := ran.AddEventHandler(ResourceEventHandlerFuncs{})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { ran.RunWithContext(ctx); close(done) }()
		synctest.Wait()
		st, err = ReadStats(ran)
		require.NoError(t, err)
		require.Len(t, st.Listeners, 1)
		assert.True(t, st.Listeners[0].Synced, "synced")
		assert.Equal(t, reg.HasSynced(), st.Listeners[0].Synced, "once synced")
		cancel()
		<-done
	})
	st, err := ReadStats(never) // outside the bubble its channels belong to
	require.NoError(t, err)
	require.Len(t, st.Listeners, 1)
	assert.False(t, st.Listeners[0].Synced)
}

// TestHandlerCallsAreTimedOnlyOnceRead: until something reads the times
// (the informer's first ReadStats, or an enabled Observer) a handler call
// is counted but not timed, so an informer nobody watches pays no clock
// reads per call; from the first ReadStats on every call is timed.
func TestHandlerCallsAreTimedOnlyOnceRead(t *testing.T) {
	srv, inf := newInformer(t, 0)
	rec := newRecorder()
	_, err := inf.AddEventHandler(rec)
	require.NoError(t, err)
	runInformer(t, inf)
	create := func(from, to int) {
		for i := from; i < to; i++ {
			_, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("p", i)}})
			require.NoError(t, err)
		}
	}
	create(0, 5)
	testutil.Eventually(t, "five calls", func() bool { return len(rec.log()) == 5 })

	st, err := ReadStats(inf)
	require.NoError(t, err)
	l := st.Listeners[0]
	assert.Equal(t, uint64(5), l.Calls, "every call is counted")
	assert.Zero(t, l.TimedCalls, "none was timed: nothing read")
	assert.Zero(t, l.HandlerTime)
	assert.Zero(t, l.MeanHandlerTime())

	create(5, 8)
	testutil.Eventually(t, "three more calls, timed", func() bool {
		st, _ = ReadStats(inf)
		return st.Listeners[0].TimedCalls == 3
	})
	l = st.Listeners[0]
	assert.Equal(t, uint64(8), l.Calls)
	assert.Positive(t, l.MaxHandlerTime)
	assert.Equal(t, l.HandlerTime/3, l.MeanHandlerTime())
}

// TestAnEnabledObserverTimesHandlerCalls: with no ReadStats, an Observer
// whose HandlerEnabled says yes is told each call's duration; one that
// says no is told nothing and the call is not timed. Enabled (the process
// call's switch) says the opposite here, and is not what decides.
func TestAnEnabledObserverTimesHandlerCalls(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint("enabled=", on), func(t *testing.T) {
			var mu sync.Mutex
			told := 0
			srv, err := apiserver.Start(apiserver.Options{})
			require.NoError(t, err)
			t.Cleanup(srv.Stop)
			inf := NewSharedIndexInformerWithOptions(srv.ListerWatcher(apiserver.Pods, ""), &corev1.Pod{}, SharedIndexInformerOptions{
				Observer: Observer{
					Enabled:        func() bool { return !on },
					HandlerEnabled: func() bool { return on },
					Handler: func(string) func(time.Duration) {
						return func(time.Duration) { mu.Lock(); told++; mu.Unlock() }
					},
				},
			})
			rec := newRecorder()
			_, err = inf.AddEventHandler(rec)
			require.NoError(t, err)
			runInformer(t, inf)
			for i := range 4 {
				_, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("p", i)}})
				require.NoError(t, err)
			}
			testutil.Eventually(t, "four calls", func() bool { return len(rec.log()) == 4 })
			mu.Lock()
			got := told
			mu.Unlock()
			if on {
				assert.Equal(t, 4, got)
			} else {
				assert.Zero(t, got)
			}
		})
	}
}
