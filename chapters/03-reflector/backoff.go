package reflector

import (
	"math/rand/v2"
	"time"
)

// The reflector's retry pacing, as upstream's defaults (reflector.go:
// defaultBackoffInit and friends): start at 800ms, double each time, stop
// growing at 30s, and add up to 100% random jitter, so a failing API server
// sees each reflector about every 30–60s (~0.02 QPS) instead of every second,
// and a thousand reflectors do not retry in step. After 2 minutes without
// needing a delay the API server is taken to be healthy again and the next
// delay starts from 800ms.
const (
	defaultBackoffInit   = 800 * time.Millisecond
	defaultBackoffMax    = 30 * time.Second
	defaultBackoffReset  = 2 * time.Minute
	defaultBackoffFactor = 2.0
	defaultBackoffJitter = 1.0
)

// Backoff describes a capped exponential backoff with jitter.
//
// Mirrors the fields of [k8s.io/apimachinery/pkg/util/wait.Backoff] that the
// reflector uses (Duration, Factor, Jitter, Cap), passed as
// [k8s.io/client-go/tools/cache.ReflectorOptions].Backoff.
type Backoff struct {
	// Duration is the first delay.
	Duration time.Duration
	// Factor multiplies the delay after each use.
	Factor float64
	// Jitter adds a random extra of up to Jitter×delay.
	Jitter float64
	// Cap is the largest delay before jitter.
	Cap time.Duration
	// ResetAfter: if this long has passed since the last delay was asked
	// for, start again from Duration.
	ResetAfter time.Duration
}

// DefaultBackoff is the reflector's default: 800ms doubling to 30s, jitter
// 1.0, reset after 2 minutes.
func DefaultBackoff() Backoff {
	return Backoff{Duration: defaultBackoffInit, Factor: defaultBackoffFactor, Jitter: defaultBackoffJitter,
		Cap: defaultBackoffMax, ResetAfter: defaultBackoffReset}
}

// backoffManager hands out successive delays. Not safe for concurrent use:
// one reflector goroutine owns it.
type backoffManager struct {
	cfg  Backoff
	next time.Duration // the next delay before jitter
	last time.Time     // when a delay was last handed out
}

func newBackoffManager(cfg Backoff) *backoffManager {
	return &backoffManager{cfg: cfg, next: cfg.Duration}
}

// delay returns the next delay to wait.
func (b *backoffManager) delay() time.Duration {
	now := time.Now()
	if !b.last.IsZero() && now.Sub(b.last) > b.cfg.ResetAfter {
		b.next = b.cfg.Duration
	}
	b.last = now
	d := b.next
	if b.next = time.Duration(float64(b.next) * b.cfg.Factor); b.next > b.cfg.Cap {
		b.next = b.cfg.Cap
	}
	if b.cfg.Jitter > 0 {
		d += time.Duration(rand.Float64() * b.cfg.Jitter * float64(d))
	}
	return d
}

// retryWithDeadline decides whether an internal error (HTTP 500) ending a
// watch should be retried at once, without a relist: for up to maxDuration
// after the first of a run of such errors. A run ends when no such error has
// been seen for resetAfter.
//
// Mirrors [k8s.io/client-go/tools/cache.RetryWithDeadline] (retry_with_deadline.go),
// used for Reflector.MaxInternalErrorRetryDuration.
type retryWithDeadline struct {
	maxDuration, resetAfter time.Duration
	isRetryable             func(error) bool
	first, last             time.Time
}

func (r *retryWithDeadline) after(err error) {
	if err == nil || !r.isRetryable(err) {
		return
	}
	now := time.Now()
	if r.first.IsZero() || now.Sub(r.last) > r.resetAfter {
		r.first = now
	}
	r.last = now
}

func (r *retryWithDeadline) shouldRetry() bool {
	return r.maxDuration > 0 && !r.first.IsZero() && time.Since(r.first) <= r.maxDuration
}
