//go:build linux

package cputime_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/internal/cputime"
)

// A goroutine on its own thread: the thread's CPU time grows with the work
// that goroutine does, and another thread's work does not move it.
func TestThreadCountsOnlyThatThreadsCPU(t *testing.T) {
	spin := func(n int) (x uint64) {
		for i := range n {
			x += uint64(i) * 2654435761
		}
		return x
	}
	done := make(chan [4]int64)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid := cputime.ThreadID()
		a, ok := cputime.Thread(tid)
		measured := int64(0)
		if ok {
			measured = 1
		}
		// Another goroutine works while this one sleeps on its thread.
		other := make(chan uint64)
		go func() { other <- spin(50_000_000) }()
		<-other
		b, _ := cputime.Thread(tid)
		spin(50_000_000)
		c, _ := cputime.Thread(tid)
		done <- [4]int64{int64(a), int64(b), int64(c), measured}
	}()
	r := <-done
	require.Equal(t, int64(1), r[3], "the thread's schedstat was read")
	idle, busy := r[1]-r[0], r[2]-r[1]
	require.Positive(t, busy, "the thread's own work")
	require.Less(t, idle, busy/2, "while another thread worked, this one hardly moved")
}

func TestThreadOfNoThreadIsNotMeasured(t *testing.T) {
	_, ok := cputime.Thread(-1)
	require.False(t, ok)
}
