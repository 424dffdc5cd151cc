package dropin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/cputime"
	"github.com/informer-anatomy/informer-anatomy/internal/informerbench"
)

// loopCPU runs op in b.Loop and reports, beside the wall time, the
// process's CPU time per op (cpu-ns/op): on a shared machine the wall
// time also counts the time other processes held the cores.
func loopCPU(b *testing.B, op func()) {
	c0 := cputime.Process()
	for b.Loop() {
		op()
	}
	b.ReportMetric(float64(cputime.Process()-c0)/float64(b.N), "cpu-ns/op")
}

// liveViewBenchProcess is a process with informers informers, each with
// four handlers, and as many traced queues, every informer synced and
// idle: what a page costs a controller at rest, not the informers' own
// work. stop ends them.
func liveViewBenchProcess(b *testing.B, informers int) (stop func()) {
	list, updates := informerbench.Fixture()
	ctx, cancel := context.WithCancel(context.Background())
	var waits []func()
	var done []chan struct{}
	var queues []workqueue.TypedRateLimitingInterface[string]
	for i := range informers {
		inf := dropin.NewSharedIndexInformer(informerbench.NewLW(list, updates), &corev1.Pod{}, 0, cache.Indexers{})
		for range 4 {
			c := informerbench.NewCounter(informerbench.Listed + informerbench.Updates)
			_, _ = inf.AddEventHandler(c)
			done = append(done, c.Done)
		}
		queues = append(queues, dropin.NewTracedQueue(fmt.Sprint("bench-", i), workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())))
		waits = append(waits, runInformer(inf, ctx))
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			b.Fatal("not synced")
		}
	}
	for _, d := range done {
		<-d
	}
	return func() {
		cancel()
		for _, wait := range waits {
			wait()
		}
		for _, q := range queues {
			q.ShutDown()
		}
	}
}

// BenchmarkLiveViewState: one poll of /api/state (what an open page asks
// five times a second) in a process with informers informers, each with
// four handlers, and as many traced queues: the CPU an open tab takes
// from the controller is this × 5 per second.
func BenchmarkLiveViewState(b *testing.B) {
	for _, informers := range []int{1, 10} {
		b.Run(fmt.Sprintf("informers=%d", informers), func(b *testing.B) {
			h := dropin.LiveViewHandler()
			stop := liveViewBenchProcess(b, informers)
			defer stop()
			req := httptest.NewRequest(http.MethodGet, "/api/state", nil)
			loopCPU(b, func() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatal(w.Code)
				}
			})
		})
	}
}

// BenchmarkLiveViewHistory: one poll of /api/history, in the process of
// BenchmarkLiveViewState (each informer: one informer_queued_items series,
// four handlers of two series each; each queue three series).
//
//   - poll: what an open page asks once a second, a second after its last
//     poll: one sample of every series and the new point of each (the
//     clock is stepped a second per poll, rather than waited for). The CPU
//     an open page takes for its plots is this once per second, however
//     many tabs: the others within the second take no sample.
//   - first: a page opened on a full history (300 points per series): all
//     of them, once.
func BenchmarkLiveViewHistory(b *testing.B) {
	for _, informers := range []int{1, 10} {
		b.Run(fmt.Sprintf("informers=%d", informers), func(b *testing.B) {
			clock := time.Unix(3_000_000, 0)
			restore := dropin.UseLiveHistoryClock(func() time.Time { return clock })
			defer restore()
			h := dropin.LiveViewHandler()
			stop := liveViewBenchProcess(b, informers)
			defer stop()
			get := func(url string) {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, url, nil))
				if w.Code != http.StatusOK {
					b.Fatal(w.Code)
				}
			}
			b.Run("poll", func(b *testing.B) {
				loopCPU(b, func() {
					since := clock.UnixMilli()
					clock = clock.Add(time.Second)
					get(fmt.Sprint("/api/history?since=", since))
				})
			})
			for range 300 {
				clock = clock.Add(time.Second)
				get("/api/history?since=0")
			}
			b.Run("first", func(b *testing.B) {
				loopCPU(b, func() { get("/api/history") })
			})
		})
	}
}
