package processor

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace/noop"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// sleeper's every call sleeps for d, on the clock of the synctest bubble
// it runs in: exactly d of that clock, so a call's duration is known. An
// update to panicOn panics after its sleep.
type sleeper struct {
	d       time.Duration
	panicOn int
}

func (s sleeper) OnAdd(any, bool) { time.Sleep(s.d) }
func (s sleeper) OnUpdate(_, obj any) {
	time.Sleep(s.d)
	if obj.(int) == s.panicOn {
		panic("sleeper: the update it panics on")
	}
}
func (s sleeper) OnDelete(any) { time.Sleep(s.d) }

// TestABusyListenerTimesEachCallFromTheLastOnesEnd: a listener whose next
// notification is already waiting starts timing a call from the reading
// that ended the one before (one clock read per call, run says why), and
// one that had to wait reads the clock again. In a synctest bubble, where
// only the handler's sleep moves the clock, every call of a burst is
// reported at exactly its sleep, none at more (a call timed from the end
// of the one before an idle wait would be reported with the wait in it),
// every call is counted and timed, and the observer is told each
// duration once: as many as the calls. Two bursts, a wait between and
// after them, and a third burst that starts while the second one's calls
// still run. With utilruntime.ReallyCrash off, a call that panics in a
// burst is reported at its sleep, and the call after it too, not with the
// second run sleeps after a crash.
func TestABusyListenerTimesEachCallFromTheLastOnesEnd(t *testing.T) {
	for _, panicOn := range []int{-1, 35} { // 35: in the last burst
		t.Run(fmt.Sprint("panicOn=", panicOn), func(t *testing.T) {
			if panicOn >= 0 {
				defer func(was bool) { utilruntime.ReallyCrash = was }(utilruntime.ReallyCrash)
				utilruntime.ReallyCrash = false
			}
			testBusyListenerTiming(t, panicOn)
		})
	}
}

func testBusyListenerTiming(t *testing.T, panicOn int) {
	const sleep, wait = 3 * time.Millisecond, 50 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var told []time.Duration
		l := newProcessListener(sleeper{sleep, panicOn}, "sleeper#0", 0, 0, time.Now(), syncedChecker{},
			noop.NewTracerProvider().Tracer(""), attribute.String("k", "v"))
		l.counts.observe = func(d time.Duration) { mu.Lock(); told = append(told, d); mu.Unlock() }
		var wg sync.WaitGroup
		wg.Go(l.pop)
		wg.Go(l.run)

		calls := 0
		burst := func(n int) {
			for i := calls; i < calls+n; i++ {
				l.add(notification{kind: updateKind, oldObj: i, newObj: i})
			}
			calls += n
		}
		burst(20)
		synctest.Wait() // all 20 waiting before the first call ends
		time.Sleep(wait)
		burst(1) // alone, after an idle wait
		time.Sleep(wait)
		burst(10)
		time.Sleep(sleep / 2) // the third burst lands while the second runs
		burst(10)
		// Both bursts handled (and the second after a crash): closing
		// addCh drops what waits.
		time.Sleep(20*sleep + time.Second + wait)
		close(l.addCh)
		wg.Wait()

		mu.Lock()
		defer mu.Unlock()
		require.Len(t, told, calls, "the observer is told every call once")
		for i, d := range told {
			assert.Equal(t, sleep, d, "call %d is reported at its handler's sleep, no more, no less", i)
		}
		assert.Equal(t, uint64(calls), l.counts.timedCalls.Load()+l.counts.untimedCalls.Load(), "every call counted")
		assert.Equal(t, uint64(calls), l.counts.timedCalls.Load(), "every call timed")
		assert.Equal(t, int64(calls)*int64(sleep), l.counts.total.Load())
		assert.Equal(t, int64(sleep), l.counts.max.Load())
	})
}
