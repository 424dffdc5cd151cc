package dropin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/informerbench"
)

// BenchmarkLiveViewState: one poll of /api/state (what an open page asks
// five times a second) in a process with informers informers, each with
// four handlers, and as many traced queues: the CPU an open tab takes
// from the controller is this × 5 per second.
func BenchmarkLiveViewState(b *testing.B) {
	for _, informers := range []int{1, 10} {
		b.Run(fmt.Sprintf("informers=%d", informers), func(b *testing.B) {
			list, updates := informerbench.Fixture()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h := dropin.LiveViewHandler()
			var waits []func()
			var done []chan struct{}
			for i := range informers {
				inf := dropin.NewSharedIndexInformer(informerbench.NewLW(list, updates), &corev1.Pod{}, 0, cache.Indexers{})
				for range 4 {
					c := informerbench.NewCounter(informerbench.Listed + informerbench.Updates)
					_, _ = inf.AddEventHandler(c)
					done = append(done, c.Done)
				}
				q := dropin.NewTracedQueue(fmt.Sprint("bench-", i), workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()))
				defer q.ShutDown()
				waits = append(waits, runInformer(inf, ctx))
				if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
					b.Fatal("not synced")
				}
			}
			// Measured once every informer is idle: what a page costs a
			// controller at rest, not the informers' own work.
			for _, d := range done {
				<-d
			}
			req := httptest.NewRequest(http.MethodGet, "/api/state", nil)
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatal(w.Code)
				}
			}
			cancel()
			for _, wait := range waits {
				wait()
			}
		})
	}
}
