package dropin

import "testing"

// SkipRateLimiterOf makes NewTracedQueue find no rate limiter in the
// queue it wraps until t ends, as it would behind a client-go that renamed
// the field it reads: the limiter is then known only where it is handed
// over (NewTracedRateLimitingQueueWithConfig).
//
// The switch is process-wide, so a parallel test must not flip it while
// others build queues: t.Setenv, which refuses a test that called (or
// will call) t.Parallel, makes that a panic instead of a flaky run.
func SkipRateLimiterOf(t testing.TB) {
	t.Setenv("INFORMER_ANATOMY_SKIP_RATELIMITER_OF", "1")
	noRateLimiterOf.Store(true)
	t.Cleanup(func() { noRateLimiterOf.Store(false) })
}
