package monoclock_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/internal/monoclock"
)

// The clock never goes back, and it is the clock time.Since reads: a span
// that time.Since measures around a sleep contains the span Since measures
// inside it, and that one contains the sleep.
func TestSinceAgreesWithTimeSince(t *testing.T) {
	const sleep = 3 * time.Millisecond
	outer := time.Now()
	start := monoclock.Now()
	time.Sleep(sleep)
	inner := monoclock.Since(start)
	whole := time.Since(outer)
	require.GreaterOrEqual(t, inner, sleep, "the clock advanced less than a sleep that returned")
	require.LessOrEqual(t, inner, whole, "the clock advanced more than time.Since around it says")

	prev := monoclock.Now()
	for range 10_000 {
		now := monoclock.Now()
		require.GreaterOrEqual(t, now, prev, "the monotonic clock went back")
		prev = now
	}
}

// Reading it allocates nothing: it is on the path of every handler call
// that is timed.
func TestNowAllocatesNothing(t *testing.T) {
	var d time.Duration
	allocs := testing.AllocsPerRun(1000, func() { d += monoclock.Since(monoclock.Now()) })
	require.Zero(t, allocs)
}

// In a synctest bubble it is the bubble's clock, as time.Since is: a
// handler that sleeps an hour in a user's synctest test is timed an hour.
func TestInABubbleItIsTheBubblesClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := monoclock.Now()
		time.Sleep(time.Hour)
		require.Equal(t, time.Hour, monoclock.Since(start))
	})
}
