package reflector

import (
	"math"
	"math/rand/v2"
	"time"
)

// The reflector's retry pacing, as upstream's defaults (reflector.go:
// defaultBackoffInit and friends): start at 800ms, double each time, stop
// growing at 30s, and add up to 100% random jitter, so a grown delay is
// 30–60s instead of a retry every second, and a thousand reflectors do not
// retry in step.
//
// defaultBackoffReset is not "two minutes without a delay" (which upstream's
// comment on it suggests): the pacing starts again from 800ms at the first
// delay asked for more than two minutes after it last started, even in the
// middle of an unbroken outage (0.8s, 1.6s … 30s, 30s, 30s, then 0.8s again).
// So in a long outage the quick retries come back every two minutes or so,
// and an API server that recovers during one is noticed within seconds.
const (
	defaultBackoffInit   = 800 * time.Millisecond
	defaultBackoffMax    = 30 * time.Second
	defaultBackoffReset  = 2 * time.Minute
	defaultBackoffFactor = 2.0
	defaultBackoffJitter = 1.0
)

// defaultBackoffSteps is how many times the default delay may grow; upstream
// computes it as ceil(30s/800ms) = 38. Doubling reaches the cap after six
// steps, so it is the cap, not Steps, that stops the default from growing.
var defaultBackoffSteps = int(math.Ceil(float64(defaultBackoffMax) / float64(defaultBackoffInit)))

// Backoff describes a capped exponential backoff with jitter.
//
// Mirrors [k8s.io/apimachinery/pkg/util/wait.Backoff] (backoff.go), passed as
// [k8s.io/client-go/tools/cache.ReflectorOptions].Backoff, and the
// [k8s.io/apimachinery/pkg/util/wait.Backoff.DelayWithReset] rule the
// reflector applies to it. ResetAfter is ours: upstream's reflector always
// resets every 2 minutes, which is what ResetAfter zero means.
type Backoff struct {
	// Duration is the first delay.
	Duration time.Duration
	// Factor multiplies the delay (before jitter) after each use, while
	// Steps lasts. Zero: the delay never changes. Zero or less: the pacing
	// never starts over (upstream hands such a backoff to a plain DelayFunc).
	Factor float64
	// Jitter adds a random extra of up to Jitter×delay to each delay; the
	// extra is not carried into the next one.
	Jitter float64
	// Steps is how many more times the delay may grow. Zero or less: it
	// stays at Duration for good, whatever Factor says. So a custom Backoff
	// that wants to grow must set Steps, as with wait.Backoff.
	Steps int
	// Cap, if positive, is the largest delay before jitter: once growing
	// would pass it, the delay becomes Cap and stops growing. Duration itself
	// is not capped.
	Cap time.Duration
	// ResetAfter: once this long has passed since the pacing last (re)started,
	// the next delay starts again from Duration and Steps. The first start is
	// when the reflector is created. Zero means 2 minutes, upstream's value.
	// Negative means what wait.Backoff.DelayWithReset does with a
	// non-positive interval: every delay is Duration (plus jitter).
	ResetAfter time.Duration
}

// DefaultBackoff is the reflector's default: 800ms doubling to 30s (38 steps
// allowed), jitter 1.0, starting over every 2 minutes.
func DefaultBackoff() Backoff {
	return Backoff{Duration: defaultBackoffInit, Factor: defaultBackoffFactor, Jitter: defaultBackoffJitter,
		Steps: defaultBackoffSteps, Cap: defaultBackoffMax, ResetAfter: defaultBackoffReset}
}

// step returns the next delay and moves b on to the one after, by
// wait.Backoff's rule.
func (b *Backoff) step() time.Duration {
	d := b.Duration
	if b.Steps >= 1 {
		b.Steps--
		if b.Factor != 0 {
			next := time.Duration(float64(b.Duration) * b.Factor)
			if b.Cap > 0 && next > b.Cap {
				// Growing stops here for good: with Steps 0 the cap is never
				// multiplied again.
				next, b.Steps = b.Cap, 0
			}
			b.Duration = next
		}
	}
	if b.Jitter > 0 {
		d += time.Duration(rand.Float64() * b.Jitter * float64(d))
	}
	return d
}

// backoffManager hands out successive delays. Not safe for concurrent use:
// one reflector goroutine owns it.
type backoffManager struct {
	initial Backoff // what a reset goes back to
	current Backoff
	// resetEvery is how often the pacing starts over; zero: never.
	resetEvery time.Duration
	// started is when the pacing last (re)started. It is not moved by a
	// delay, only by a reset: the reset is on a fixed two-minute rhythm, not
	// after two quiet minutes.
	started time.Time
}

// newBackoffManager starts the pacing now; the reflector calls it when it is
// created, as upstream's DelayWithReset is called in NewReflectorWithOptions.
func newBackoffManager(cfg Backoff) *backoffManager {
	m := &backoffManager{resetEvery: cfg.ResetAfter, started: time.Now()}
	if m.resetEvery == 0 {
		m.resetEvery = defaultBackoffReset
	}
	switch {
	case cfg.Factor <= 0:
		// Upstream hands such a backoff to a plain DelayFunc: nothing grows,
		// so there is nothing to reset.
		m.resetEvery = 0
	case m.resetEvery < 0:
		cfg.Steps, cfg.Factor = 0, 0
		m.resetEvery = 0
	}
	m.initial, m.current = cfg, cfg
	return m
}

// delay returns the next delay to wait.
func (m *backoffManager) delay() time.Duration {
	if m.resetEvery > 0 {
		if now := time.Now(); now.Sub(m.started) > m.resetEvery {
			m.current, m.started = m.initial, now
		}
	}
	return m.current.step()
}

// retryWithDeadline decides whether an internal error (HTTP 500) ending a
// watch should be retried at once, without a relist: for up to maxDuration
// after the first of a run of such errors. A run ends when no such error has
// been seen for resetAfter (a gap of exactly resetAfter ends it too), or when
// shouldRetry has said no. Within the reflector the second way changes
// nothing, since watch returns after a refused retry and the next watch makes
// a new tracker; it is kept so the type behaves as upstream's on its own.
//
// Mirrors [k8s.io/client-go/tools/cache.RetryWithDeadline] (retry_with_deadline.go),
// used for Reflector.MaxInternalErrorRetryDuration.
type retryWithDeadline struct {
	maxDuration, resetAfter time.Duration
	isRetryable             func(error) bool
	first, last             time.Time // zero: no run under way
}

func (r *retryWithDeadline) after(err error) {
	if err == nil || !r.isRetryable(err) {
		return
	}
	now := time.Now()
	if r.first.IsZero() || now.Sub(r.last) >= r.resetAfter {
		r.first = now
	}
	r.last = now
}

func (r *retryWithDeadline) shouldRetry() bool {
	if r.maxDuration <= 0 {
		return false
	}
	if !r.first.IsZero() && time.Since(r.first) <= r.maxDuration {
		return true
	}
	r.first, r.last = time.Time{}, time.Time{}
	return false
}
