package queuetrace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/util/workqueue"
)

// TestRateLimiterOfClientGo: RateLimiterOf finds the limiter client-go's
// rate-limiting queue was made with (the very one: its When moves the
// queue's NumRequeues), and nothing in a queue of another type. If a
// client-go version renames the field, this fails and dropin's
// TracedQueue would be back to guessing when a rate-limited key is ready.
func TestRateLimiterOfClientGo(t *testing.T) {
	lim := workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second)
	q := workqueue.NewTypedRateLimitingQueueWithConfig(lim, workqueue.TypedRateLimitingQueueConfig[string]{})
	defer q.ShutDown()
	got := RateLimiterOf[string](q)
	require.NotNil(t, got)
	require.Equal(t, time.Millisecond, got.When("a"))
	require.Equal(t, 1, q.NumRequeues("a"), "the queue's own limiter")

	require.Nil(t, RateLimiterOf[string](workqueue.NewTyped[string]()))
	require.Nil(t, RateLimiterOf[string](struct {
		workqueue.TypedRateLimitingInterface[string]
	}{q}))
	require.Nil(t, RateLimiterOf[int](q), "a limiter of another key type")
}
