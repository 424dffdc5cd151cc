package lessons

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/dropin"
)

// A glimpse of idle between a Done and inner's re-queue of the key is not
// the end of the burst: the controller lesson once took it for the end and
// counted one reconcile where there were two. settledFor waits until idle
// has held, with the same counts, for its hold.
func TestSettledIsNotFooledByAGlimpseOfIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		busy := dropin.QueueStats{Adds: 6, Processed: 1, Processing: 1}
		glimpse := dropin.QueueStats{Adds: 6, Processed: 2} // the first reconcile's Done, before the re-queue
		requeued := dropin.QueueStats{Adds: 6, Processed: 2, Processing: 1}
		done := dropin.QueueStats{Adds: 6, Processed: 3}
		script := []dropin.QueueStats{busy, glimpse, requeued, requeued, done, done, done}
		i := 0
		stats := func() dropin.QueueStats { st := script[min(i, len(script)-1)]; i++; return st }
		cond := settledFor(stats, 100*time.Millisecond, func(st dropin.QueueStats) bool { return st.Adds == 6 })

		var heldAt []int
		for range len(script) + 2 {
			if cond() {
				heldAt = append(heldAt, i)
			}
			time.Sleep(60 * time.Millisecond)
		}
		require.NotEmpty(t, heldAt, "the end of the burst is seen")
		require.GreaterOrEqual(t, heldAt[0], 6, "settled only after idle held for its hold with Processed 3, never at the glimpse (look 2)")
	})
}
