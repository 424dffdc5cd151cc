package deltafifo

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// beforePopRun is processLoop driven by hand: the test queues, the hook
// holds the loop on its first call until release is closed, and log is
// what happened in order ("hook", "pop a", "batch a b c").
type beforePopRun struct {
	mu      sync.Mutex
	log     []string
	release chan struct{}
	calls   int // hook calls, guarded by mu
}

func (r *beforePopRun) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, s)
}

func (r *beforePopRun) hook(ctx context.Context) {
	r.mu.Lock()
	r.calls++
	first := r.calls == 1
	r.log = append(r.log, "hook")
	r.mu.Unlock()
	if first {
		select {
		case <-r.release:
		case <-ctx.Done():
		}
	}
}

func (r *beforePopRun) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

// Config.BeforePop runs before every pop, on each of processLoop's three
// ways to pop, and holds the loop while it blocks: keys queued meanwhile
// stay queued however long the loop is left alone (synctest.Wait: every
// other goroutine idle), and are popped once it returns, each pop preceded
// by a call. Pop takes one key per call, PopKeys and PopBatch all three at
// once, so the hook runs once per pop and once more before the pop that
// waits on the empty queue.
func TestBeforePopHoldsTheLoopUntilItReturns(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  func(r *beforePopRun) Config
		want []string
	}{
		{"Pop", func(r *beforePopRun) Config {
			return Config{Queue: NewDeltaFIFOWithOptions(DeltaFIFOOptions{}), Process: r.process}
		}, []string{"hook", "pop a", "hook", "pop b", "hook", "pop c", "hook"}},
		{"PopKeys", func(r *beforePopRun) Config {
			return Config{Queue: NewDeltaFIFOWithOptions(DeltaFIFOOptions{}), Process: r.process, KeysPerPop: 10}
		}, []string{"hook", "pop a", "pop b", "pop c", "hook"}},
		{"PopBatch", func(r *beforePopRun) Config {
			return Config{Queue: NewRealFIFOWithOptions(realFIFODefaults("", nil)), Process: r.process, ProcessBatch: r.processBatch}
		}, []string{"hook", "batch a b c", "hook"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := &beforePopRun{release: make(chan struct{})}
				cfg := tc.cfg(r)
				cfg.BeforePop = r.hook
				c := New(&cfg).(*controller)
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { defer close(done); c.processLoop(ctx) }()
				synctest.Wait()
				require.Equal(t, []string{"hook"}, r.got(), "the first call comes before the first pop")
				for _, n := range []string{"a", "b", "c"} {
					require.NoError(t, cfg.Queue.Add(podNamed(n)))
				}
				synctest.Wait()
				assert.Equal(t, []string{"hook"}, r.got(), "held: nothing popped")
				assert.Equal(t, 3, queueLen(t, cfg.Queue), "held: all three still queued")

				close(r.release)
				synctest.Wait()
				assert.Equal(t, tc.want, r.got())
				assert.Equal(t, 0, queueLen(t, cfg.Queue))
				cancel()
				cfg.Queue.Close()
				<-done
			})
		})
	}
}

// A hook that returns because the loop's context ended ends the loop with
// no pop: without the check after the call, a closed DeltaFIFO still
// hands out what it holds, and this pops "a".
func TestBeforePopReleasedByTheStopPopsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &beforePopRun{release: make(chan struct{})}
		q := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
		c := New(&Config{Queue: q, Process: r.process, BeforePop: r.hook}).(*controller)
		require.NoError(t, q.Add(podNamed("a")))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); c.processLoop(ctx) }()
		synctest.Wait()
		cancel()
		q.Close()
		<-done
		assert.Equal(t, []string{"hook"}, r.got())
		assert.Equal(t, 1, q.Len())
	})
}

func (r *beforePopRun) process(obj any, _ bool) error {
	ds, ok := obj.(Deltas)
	if !ok {
		return nil
	}
	r.add("pop " + ds.Newest().Object.(interface{ GetName() string }).GetName())
	return nil
}

func (r *beforePopRun) processBatch(ds []Delta, _ bool) error {
	s := "batch"
	for _, d := range ds {
		s += " " + d.Object.(interface{ GetName() string }).GetName()
	}
	r.add(s)
	return nil
}

func queueLen(t *testing.T, q Queue) int {
	t.Helper()
	l, ok := q.(interface{ Len() int })
	require.True(t, ok, "%T has no Len", q)
	return l.Len()
}
