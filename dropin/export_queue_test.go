package dropin

import "testing"

// SkipRateLimiterOf makes NewTracedQueue find no rate limiter in the
// queue it wraps until t ends, as it would behind a client-go that renamed
// the field it reads: the limiter is then known only where it is handed
// over (NewTracedRateLimitingQueueWithConfig).
func SkipRateLimiterOf(t testing.TB) {
	noRateLimiterOf.Store(true)
	t.Cleanup(func() { noRateLimiterOf.Store(false) })
}
