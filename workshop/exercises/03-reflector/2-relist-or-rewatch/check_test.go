//go:build workshop

package relistorrewatch

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func relists(t *testing.T, wait time.Duration, fault func(srv *apiserver.Server)) bool {
	srv := kit.StartServer(t)
	kit.CreatePods(t, srv, "p", 2)
	fetches := 0 // streams and LISTs: the first, and any relist
	synctest.Test(t, func(t *testing.T) {
		r := reflector.NewReflector(kit.InProcessListWatch(srv, apiserver.Pods), &corev1.Pod{}, store.NewStore(store.MetaNamespaceKeyFunc), 0)
		r.SetWatchErrorHandler(func(*reflector.Reflector, error) {})
		stop := kit.Run(r.RunWithContext)
		defer stop()
		kit.WaitFor(t, "the watch", func() bool { return srv.WatchCount() == 1 })
		time.Sleep(wait)
		fault(srv)
		time.Sleep(30 * time.Second)
		fetches = kit.CountStateFetches(srv.Requests(), "pods")
	})
	return fetches > 1
}

// refusedRelists runs Refused in real time over HTTP: a server restarted
// inside a synctest bubble would serve from the bubble and keep its fake
// clock from ever advancing. The watch is left open for over a second
// first, so that its end is not a "very short watch".
func refusedRelists(t *testing.T) bool {
	srv := kit.StartServer(t)
	kit.CreatePods(t, srv, "p", 2)
	r := reflector.NewReflector(kit.ListWatch(t, srv, apiserver.Pods), &corev1.Pod{}, store.NewStore(store.MetaNamespaceKeyFunc), 0)
	r.SetWatchErrorHandler(func(*reflector.Reflector, error) {})
	stop := kit.Run(r.RunWithContext)
	defer stop()
	kit.WaitFor(t, "the watch", func() bool { return srv.WatchCount() == 1 })
	time.Sleep(1500 * time.Millisecond)
	srv.Stop()
	time.Sleep(time.Second)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	kit.WaitFor(t, "the reflector to watch again", func() bool { return srv.WatchCount() == 1 })
	return kit.CountStateFetches(srv.Requests(), "pods") > 1
}

func TestPrediction(t *testing.T) {
	truth := Relists{
		Close:      relists(t, 5*time.Second, func(s *apiserver.Server) { s.CloseWatches() }),
		QuickClose: relists(t, 100*time.Millisecond, func(s *apiserver.Server) { s.CloseWatches() }),
		Refused:    refusedRelists(t),
		Expired: relists(t, 5*time.Second, func(s *apiserver.Server) {
			_, _ = s.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c"}})
			s.Compact()
			s.CloseWatches()
		}),
		TooMany: relists(t, 5*time.Second, func(s *apiserver.Server) {
			s.Inject(apiserver.Fault{Verb: "watch", Status: http.StatusTooManyRequests})
			s.CloseWatches()
		}),
		Forbidden: relists(t, 5*time.Second, func(s *apiserver.Server) {
			s.Inject(apiserver.Fault{Verb: "watch", Status: http.StatusForbidden})
			s.CloseWatches()
		}),
	}
	if truth != Prediction {
		// Neither which faults are wrong nor how many: each is true or
		// false, and a count would let a flip at a time find them.
		t.Errorf("Prediction: you predicted %+v, not what the reflector did for all six faults (see the failure table in docs/03-reflector.md)", Prediction)
	}
}
