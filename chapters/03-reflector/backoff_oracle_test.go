package reflector

// The retry pacing against upstream's, in fake time (testing/synctest): the
// apimachinery backoff the reflector uses, delay by delay, and client-go's
// Reflector itself, request by request, through outages longer than the
// two-minute reset. Inside a bubble, clock.RealClock and time.Now are the
// bubble's fake clock, so both sides see the same instants.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	kcache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
)

// outage is how long the simulated API server stays down: three times the
// reset interval, so every sequence goes through at least two resets.
const outage = 6 * time.Minute

// upstreamBackoff is the wait.Backoff with our b's parameters, and the reset
// interval upstream's reflector would use (always 2 minutes there; ours lets
// ResetAfter change it, zero meaning 2 minutes).
func upstreamBackoff(b Backoff) (wait.Backoff, time.Duration) {
	reset := b.ResetAfter
	if reset == 0 {
		reset = 2 * time.Minute
	}
	return wait.Backoff{Duration: b.Duration, Factor: b.Factor, Jitter: b.Jitter, Steps: b.Steps, Cap: b.Cap}, reset
}

// failFor calls next over and over, sleeping each returned delay, until the
// outage is over (or 500 calls, for a backoff whose delays do not advance
// time), and returns the delays.
func failFor(next func() time.Duration) []time.Duration {
	var out []time.Duration
	for start := time.Now(); time.Since(start) < outage && len(out) < 500; {
		d := next()
		out = append(out, d)
		time.Sleep(d)
	}
	return out
}

func TestBackoffDelaysAreUpstreamsThroughALongOutage(t *testing.T) {
	withoutJitter := DefaultBackoff()
	withoutJitter.Jitter = 0
	cases := map[string]Backoff{
		"default without jitter":            withoutJitter,
		"custom with Steps":                 {Duration: time.Second, Factor: 3, Steps: 4, Cap: time.Minute},
		"custom with Steps 0: never grows":  {Duration: 2 * time.Second, Factor: 2, Cap: 10 * time.Second},
		"ResetAfter 0 is 2 minutes":         {Duration: 500 * time.Millisecond, Factor: 2, Steps: 100, Cap: 20 * time.Second},
		"ResetAfter 45s":                    {Duration: 500 * time.Millisecond, Factor: 2, Steps: 100, Cap: 20 * time.Second, ResetAfter: 45 * time.Second},
		"negative ResetAfter: no growth":    {Duration: 3 * time.Second, Factor: 2, Steps: 10, Cap: 20 * time.Second, ResetAfter: -1},
		"no Cap: grows until Steps run out": {Duration: 100 * time.Millisecond, Factor: 1.5, Steps: 12},
		"Duration above Cap":                {Duration: 40 * time.Second, Factor: 2, Steps: 5, Cap: 30 * time.Second},
		"Factor 0: constant":                {Duration: 5 * time.Second, Steps: 10, Cap: time.Second},
		"negative Factor":                   {Duration: time.Second, Factor: -2, Steps: 3},
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, reset := upstreamBackoff(cfg)
				theirs := b.DelayWithReset(clock.RealClock{}, reset)
				ours := newBackoffManager(cfg)
				var want []time.Duration
				got := failFor(func() time.Duration {
					d := theirs()
					want = append(want, d)
					return ours.delay()
				})
				require.Equal(t, want, got)
			})
		})
	}
}

// The default pacing, written out: doubling from 0.8s, held at 30s, and back
// to 0.8s at the first delay asked for more than 2 minutes after the last
// (re)start, although the outage never let up.
func TestDefaultBackoffStartsOverEveryTwoMinutesOfOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := DefaultBackoff()
		cfg.Jitter = 0
		ours := newBackoffManager(cfg)
		got := failFor(ours.delay)
		ms := func(v ...float64) (out []time.Duration) {
			for _, f := range v {
				out = append(out, time.Duration(f*float64(time.Millisecond)))
			}
			return out
		}
		// Asked at 0, 0.8, 2.4, 5.6, 12, 24.8, 50.4, 80.4, 110.4 s; at 140.4 s
		// more than 2 minutes have passed since 0: start over.
		want := ms(800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000,
			800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000,
			800)
		require.GreaterOrEqual(t, len(got), len(want))
		assert.Equal(t, want, got[:len(want)])
	})
}

// With jitter, each of our delays is its unjittered base plus up to 100%, and
// the bases are upstream's: an upstream backoff with the same parameters but
// no jitter, asked at the same instants, gives them.
func TestDefaultBackoffJittersUpstreamsDelays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := DefaultBackoff()
		b, reset := upstreamBackoff(cfg)
		b.Jitter = 0
		theirs := b.DelayWithReset(clock.RealClock{}, reset)
		ours := newBackoffManager(cfg)
		var bases []time.Duration
		got := failFor(func() time.Duration {
			bases = append(bases, theirs())
			return ours.delay()
		})
		jittered := 0
		for i, d := range got {
			assert.GreaterOrEqual(t, d, bases[i], "delay %d", i)
			assert.Less(t, d, 2*bases[i], "delay %d: jitter adds less than 100%%", i)
			if d > bases[i] {
				jittered++
			}
		}
		assert.Positive(t, jittered, "no delay was jittered: %v", got)
		assert.Contains(t, bases[1:], defaultBackoffInit, "the outage went through a reset: %v", bases)
	})
}

// connectionRefused is what a dial to a port nobody listens on returns,
// wrapped as client-go's REST client wraps it.
func connectionRefused() error {
	return &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/api/v1/pods", Err: &net.OpError{
		Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
}

// requestLog records when each request came, relative to start.
type requestLog struct {
	mu    sync.Mutex
	start time.Time
	at    []time.Duration
	verbs []string
}

func (l *requestLog) record(verb string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.at = append(l.at, time.Since(l.start))
	l.verbs = append(l.verbs, verb)
	return connectionRefused()
}

func (l *requestLog) snapshot() ([]time.Duration, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.at), slices.Clone(l.verbs)
}

// Our Reflector and client-go's, each against an API server that refuses
// every connection for 6 minutes, with the same Jitter-0 backoff: every
// failed request is followed by exactly one delay, so the requests come at
// the same instants. (Which request each sends first, LIST or a watch-list
// WATCH, is tested elsewhere; the times must match either way.)
func TestReflectorRetriesARefusingServerAtUpstreamsTimes(t *testing.T) {
	require.True(t, utilnet.IsConnectionRefused(connectionRefused()), "the stand-in error must be what client-go retries on")
	synctest.Test(t, func(t *testing.T) {
		cfg := Backoff{Duration: time.Second, Factor: 2, Steps: 10, Cap: 20 * time.Second}
		b, _ := upstreamBackoff(cfg)

		start := time.Now()
		oursLog, theirsLog := &requestLog{start: start}, &requestLog{start: start}
		oursR := NewReflectorWithOptions(&ListWatch{
			ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				return nil, oursLog.record("LIST")
			},
			WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
				return nil, oursLog.record("WATCH")
			},
		}, &corev1.Pod{}, store.NewStore(store.MetaNamespaceKeyFunc), ReflectorOptions{Name: "ours", Backoff: &cfg})
		errs := &errorLog{}
		oursR.SetWatchErrorHandler(errs.handler)
		theirsR := kcache.NewReflectorWithOptions(&kcache.ListWatch{
			ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				return nil, theirsLog.record("LIST")
			},
			WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
				return nil, theirsLog.record("WATCH")
			},
		}, &corev1.Pod{}, kcache.NewStore(kcache.MetaNamespaceKeyFunc), kcache.ReflectorOptions{Name: "theirs", Backoff: &b})

		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { oursR.RunWithContext(ctx) })
		wg.Go(func() { theirsR.RunWithContext(ctx) })
		time.Sleep(outage)
		synctest.Wait()
		ours, oursVerbs := oursLog.snapshot()
		theirs, theirsVerbs := theirsLog.snapshot()
		// Stop both. client-go's watch-list retry waits out its delay
		// without watching ctx, so its goroutine ends only once that delay
		// has passed: Wait blocks every goroutine in the bubble, and the fake
		// clock jumps to it.
		cancel()
		wg.Wait()

		require.Greater(t, len(theirs), 20, "client-go kept retrying through the outage: %v", theirs)
		assert.Equal(t, theirs, ours, "request times; verbs: ours %v, client-go's %v", oursVerbs, theirsVerbs)
		// The delays themselves went through a reset: a gap of the initial
		// 1s after gaps of 20s.
		gaps := make([]time.Duration, len(ours)-1)
		for i := range gaps {
			gaps[i] = ours[i+1] - ours[i]
		}
		i := slices.Index(gaps, cfg.Cap)
		require.NotEqual(t, -1, i, "the delays reached the cap: %v", gaps)
		assert.Contains(t, gaps[i:], cfg.Duration, "a reset followed the cap: %v", gaps)
		assert.NotEmpty(t, errs.all(), "our failures reached the handler")
	})
}

// retryWithDeadline against client-go's RetryWithDeadline, step by step in
// fake time: the same answers from ShouldRetry through runs of 500s, a gap of
// exactly the reset period, and errors right after a refused retry.
func TestRetryWithDeadlineIsUpstreams(t *testing.T) {
	internal := apierrors.NewInternalError(errors.New("etcd is unhappy"))
	other := apierrors.NewForbidden(corev1.Resource("pods"), "", errors.New("no"))
	type step struct {
		wait  time.Duration
		err   error // given to after, if check is false
		check bool  // ask shouldRetry instead
	}
	script := []step{
		{check: true}, // no error yet
		{err: internal}, {check: true},
		{wait: 20 * time.Second, err: internal}, {check: true},
		{wait: 5 * time.Second, err: other}, {err: nil}, {check: true},
		{wait: 20 * time.Second, err: internal}, {check: true}, // 45s after the first: refused
		{wait: time.Second, err: internal}, {check: true}, // a new run
		{wait: time.Minute, err: internal}, // exactly the reset period after the last
		{wait: 20 * time.Second}, {check: true},
		{wait: 59 * time.Second, err: internal}, // just inside it: the same run
		{wait: 20 * time.Second}, {check: true},
	}
	for _, maxDuration := range []time.Duration{0, 30 * time.Second} {
		t.Run(fmt.Sprint("max ", maxDuration), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				theirs := kcache.NewRetryWithDeadline(maxDuration, time.Minute, apierrors.IsInternalError, clock.RealClock{})
				ours := &retryWithDeadline{maxDuration: maxDuration, resetAfter: time.Minute, isRetryable: apierrors.IsInternalError}
				var want, got []bool
				for _, s := range script {
					time.Sleep(s.wait)
					if s.check {
						want, got = append(want, theirs.ShouldRetry()), append(got, ours.shouldRetry())
						continue
					}
					theirs.After(s.err)
					ours.after(s.err)
				}
				require.Equal(t, want, got)
				if maxDuration > 0 {
					assert.Contains(t, want, true)
					assert.Contains(t, want, false)
				}
			})
		})
	}
}
