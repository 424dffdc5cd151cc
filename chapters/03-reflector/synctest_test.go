package reflector

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"

	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

// These tests run in a synctest bubble: time is fake and jumps ahead whenever
// every goroutine in the bubble is blocked, so a 30s backoff takes no real
// time and its length can be checked exactly. They talk to the embedded API
// server in process (Server.List/Watch): a goroutine blocked on a socket is
// not "durably blocked" and would stop the fake clock.

func startServer(t *testing.T) *apiserver.Server {
	t.Helper()
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	return srv
}

// runInBubble starts r and returns a stop function that waits for it.
func runInBubble(r *Reflector) (stop func()) { return runInBubbleWith(context.Background(), r) }

// runInBubbleWith is runInBubble with a parent context (a logger in it).
func runInBubbleWith(parent context.Context, r *Reflector) (stop func()) {
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	go func() { defer close(done); r.RunWithContext(ctx) }()
	return func() { cancel(); <-done }
}

// timedLW is directLW(srv) with a record of when each LIST and each WATCH
// was asked for; calls returns copies of both. The record's mutex is not a
// durable block, so calls holds it only while copying: it is safe between
// sleeps and synctest.Wait.
func timedLW(srv *apiserver.Server) (lw *ListWatch, calls func() (lists, watches []time.Time)) {
	var mu sync.Mutex
	var listAt, watchAt []time.Time
	lw = directLW(srv)
	list, watchFn := lw.ListWithContextFunc, lw.WatchFuncWithContext
	lw.ListWithContextFunc = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		mu.Lock()
		listAt = append(listAt, time.Now())
		mu.Unlock()
		return list(ctx, o)
	}
	lw.WatchFuncWithContext = func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		mu.Lock()
		watchAt = append(watchAt, time.Now())
		mu.Unlock()
		return watchFn(ctx, o)
	}
	return lw, func() ([]time.Time, []time.Time) {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(listAt), slices.Clone(watchAt)
	}
}

func TestBackoffDelaysDoubleToTheCapWithJitterAndReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBackoffManager(DefaultBackoff())
		// Even fully jittered, these six add up to under 2 minutes, so no
		// reset can come between them.
		base := []time.Duration{800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond,
			6400 * time.Millisecond, 12800 * time.Millisecond, 25600 * time.Millisecond}
		for i, d := range base {
			got := b.delay()
			assert.GreaterOrEqual(t, got, d, "delay %d", i)
			assert.Less(t, got, 2*d, "delay %d: jitter adds at most 100%%", i)
			time.Sleep(got)
		}
		// Still under 2 minutes since the start: held at the cap.
		got := b.delay()
		assert.GreaterOrEqual(t, got, 30*time.Second)
		assert.Less(t, got, time.Minute)
		// More than 2 minutes since the start: begin again, whether or not
		// the delays stopped in between (see backoff_oracle_test.go for an
		// unbroken outage).
		time.Sleep(2 * time.Minute)
		got = b.delay()
		assert.GreaterOrEqual(t, got, 800*time.Millisecond)
		assert.Less(t, got, 1600*time.Millisecond)
	})
}

func TestReflectorRetriesAFailingListWithTheBackoff(t *testing.T) {
	srv := startServer(t)
	srv.Inject(apiserver.Fault{Verb: "list", Status: http.StatusInternalServerError, Count: 5})
	synctest.Test(t, func(t *testing.T) {
		lw, calls := timedLW(srv)
		errs := &errorLog{}
		s := newRecordingStore()
		r := NewReflectorWithOptions(lw, nil, s, ReflectorOptions{UseWatchList: listFirst}) // the default backoff
		r.SetWatchErrorHandler(errs.handler)
		stop := runInBubble(r)
		time.Sleep(time.Minute)
		synctest.Wait()
		stop()

		at, _ := calls()
		require.Len(t, at, 6, "five failures, then a list that works")
		for i := 1; i < len(at); i++ {
			gap, base := at[i].Sub(at[i-1]), 800*time.Millisecond<<(i-1)
			assert.GreaterOrEqual(t, gap, base, "gap %d", i)
			assert.Less(t, gap, 2*base, "gap %d", i)
		}
		assert.Len(t, errs.all(), 5, "each failed ListAndWatch is reported once")
	})
}

func TestVeryShortWatch(t *testing.T) {
	srv := startServer(t)
	synctest.Test(t, func(t *testing.T) {
		errs := &errorLog{}
		s := newRecordingStore()
		r := newTestReflector(directLW(srv), s, errs, ReflectorOptions{})
		stop := runInBubble(r)
		defer stop()
		synctest.Wait() // listed, watching

		srv.CloseWatches() // no event, no time passed
		synctest.Wait()
		var short *VeryShortWatchError
		require.NotNil(t, errs.find(func(err error) bool { return errors.As(err, &short) }), "%v", errs.all())
		assert.Contains(t, short.Error(), "watch lasted less than a second and no items received")
	})
}

func TestQuietWatchOfMoreThanASecondIsNotShort(t *testing.T) {
	srv := startServer(t)
	synctest.Test(t, func(t *testing.T) {
		errs := &errorLog{}
		r := newTestReflector(directLW(srv), newRecordingStore(), errs, ReflectorOptions{})
		stop := runInBubble(r)
		defer stop()
		synctest.Wait()
		time.Sleep(1100 * time.Millisecond)
		srv.CloseWatches()
		synctest.Wait()
		assert.Empty(t, errs.all())
	})
}

func TestResyncRunsOnlyWhileWatchingAndWhenAllowed(t *testing.T) {
	srv := startServer(t)
	t.Run("every period while watching", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newRecordingStore()
			stop := runInBubble(newTestReflector(directLW(srv), s, &errorLog{}, ReflectorOptions{ResyncPeriod: time.Second}))
			synctest.Wait()
			time.Sleep(3500 * time.Millisecond)
			synctest.Wait()
			stop()
			assert.Equal(t, 3, s.resyncCount())
		})
	})
	t.Run("ShouldResync says no", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newRecordingStore()
			r := newTestReflector(directLW(srv), s, &errorLog{}, ReflectorOptions{ResyncPeriod: time.Second})
			asked := 0
			r.ShouldResync = func() bool { asked++; return false }
			stop := runInBubble(r)
			time.Sleep(3500 * time.Millisecond)
			synctest.Wait()
			stop()
			assert.Equal(t, 0, s.resyncCount())
			assert.Equal(t, 3, asked)
		})
	})
	t.Run("not while failing to list", func(t *testing.T) {
		srv.Inject(apiserver.Fault{Verb: "list", Status: http.StatusInternalServerError, Count: 1000})
		synctest.Test(t, func(t *testing.T) {
			s := newRecordingStore()
			stop := runInBubble(newTestReflector(directLW(srv), s, &errorLog{}, ReflectorOptions{ResyncPeriod: time.Second, UseWatchList: listFirst}))
			time.Sleep(10 * time.Second)
			synctest.Wait()
			stop()
			assert.Equal(t, 0, s.resyncCount())
		})
	})
}

// A storm of 429s on WATCH is logged as client-go logs it, each one at V(4)
// ("Watch failed - backing off"), and nothing at default verbosity; it is
// over within a minute, so no handler is told. The retry pacing is
// upstream's: back off, watch again from the same RV, never relist.
func TestTooManyRequestsStormOnWatchIsLoggedAsClientGoLogsIt(t *testing.T) {
	srv := startServer(t)
	_, err := srv.Create(pod("a", "p0"))
	require.NoError(t, err)
	const storm = 6
	srv.Inject(apiserver.Fault{Verb: "watch", Status: http.StatusTooManyRequests, Count: storm})
	synctest.Test(t, func(t *testing.T) {
		lw, calls := timedLW(srv)
		errs := &errorLog{}
		s := newRecordingStore()
		r := NewReflectorWithOptions(lw, &corev1.Pod{}, s, ReflectorOptions{UseWatchList: listFirst}) // the default backoff
		r.SetWatchErrorHandler(errs.handler)
		logger, logged := levelLogger()
		stop := runInBubbleWith(klog.NewContext(context.Background(), logger), r)
		defer stop()
		time.Sleep(5 * time.Minute)
		synctest.Wait()

		listed, seen := calls()
		require.Len(t, seen, storm+1, "six refused watches, then one that stays open")
		for i := 1; i < len(seen); i++ {
			gap, base := seen[i].Sub(seen[i-1]), 800*time.Millisecond<<(i-1)
			assert.GreaterOrEqual(t, gap, base, "gap %d: the backoff is unchanged", i)
			assert.Less(t, gap, 2*base, "gap %d", i)
		}
		assert.Len(t, listed, 1, "a 429 never causes a relist")
		assert.Empty(t, errs.all(), "a storm of half a minute reaches no handler")
		assert.Equal(t, storm, strings.Count(logged(), "V(4) Watch failed - backing off\n"), "each 429 logged at V(4), as upstream: %s", logged())
		assert.NotContains(t, logged(), "V(0) ", "nothing at default verbosity")

		// A 429 on an open stream (an ERROR event) is logged at V(2), as
		// upstream's "Watch returned 429 - backing off".
		st := apierrors.NewTooManyRequests("slow down", 0).Status()
		srv.InjectWatchEvent(apiserver.Pods, watch.Error, &st)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		assert.Empty(t, errs.all())
		assert.Equal(t, 1, strings.Count(logged(), "V(2) Watch returned 429 - backing off\n"), logged())
		assert.NotContains(t, logged(), "V(0) ", "nothing at default verbosity")
		listed, seen = calls()
		assert.Len(t, listed, 1)
		assert.Len(t, seen, storm+2, "watched again")
	})
}

// An API server that stays down is not ridden out in silence: the retried
// watch requests are logged at V(4), as client-go logs them (which says
// nothing at klog's default verbosity, for as long as the outage lasts),
// and ours tells the WatchErrorHandler once they have gone on for a minute
// with no watch opening, then at two and four minutes: three reports in
// five minutes, where one per retry made about fifteen error lines. A watch
// that opens ends the outage; the next one is counted afresh.
func TestALongOutageIsReportedAsItGoesOn(t *testing.T) {
	srv := startServer(t)
	_, err := srv.Create(pod("a", "p0"))
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		var down atomic.Bool
		refused := 0
		lw := directLW(srv)
		watchFn := lw.WatchFuncWithContext
		lw.WatchFuncWithContext = func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			if down.Load() {
				refused++ // only the reflector's goroutine watches
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
			}
			return watchFn(ctx, o)
		}
		errs := &errorLog{}
		r := NewReflectorWithOptions(lw, &corev1.Pod{}, newRecordingStore(), ReflectorOptions{UseWatchList: listFirst})
		r.SetWatchErrorHandler(errs.handler)
		logger, logged := levelLogger()
		stop := runInBubbleWith(klog.NewContext(context.Background(), logger), r)
		defer stop()
		time.Sleep(2 * time.Second) // a watch of a second or more: not a "very short watch"
		synctest.Wait()

		down.Store(true)
		srv.CloseWatches()
		// The delays grow to 30 s, plus up to as much again of jitter: the
		// first retry past four minutes comes before 5m.
		time.Sleep(5*time.Minute + 10*time.Second)
		synctest.Wait()
		reports := errs.all()
		require.Len(t, reports, 3, "reported at one, two and four minutes, not per retry (%d retries): %v", refused, reports)
		for i, lasted := range []string{"for 1m", "for 2m", "for 4m"} {
			msg := reports[i].Error()
			assert.True(t, utilnet.IsConnectionRefused(reports[i]), "the report wraps the refusal: %v", reports[i])
			assert.Contains(t, msg, ": "+lasted, "how long it has lasted")
			assert.Contains(t, msg, "has refused the connection for the watches of *v1.Pod")
			assert.Contains(t, msg, "check that the API server runs and that the kubeconfig's server address is right")
			assert.Contains(t, msg, `still retrying the watch from resourceVersion "2"`)
		}
		assert.Greater(t, refused, 6, "it kept retrying")
		assert.Equal(t, refused, strings.Count(logged(), "V(4) Watch failed - backing off\n"), "each retry at V(4), as upstream")

		// Back up: a watch opens, and a new outage starts from zero. (Three
		// minutes up, so that the backoff starts again from 800 ms too: the
		// first retry past a minute then comes within two.)
		down.Store(false)
		time.Sleep(3 * time.Minute)
		synctest.Wait()
		down.Store(true)
		srv.CloseWatches()
		time.Sleep(50 * time.Second)
		synctest.Wait()
		assert.Len(t, errs.all(), 3, "a new outage of under a minute: no report yet")
		time.Sleep(70 * time.Second)
		synctest.Wait()
		require.Len(t, errs.all(), 4, "%v", errs.all())
		assert.Contains(t, errs.all()[3].Error(), ": for 1m")
	})
}
