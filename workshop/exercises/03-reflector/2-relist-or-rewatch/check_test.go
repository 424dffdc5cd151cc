//go:build workshop

package relistorrewatch

import (
	"net/http"
	"reflect"
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

// after is the pod requests after the first, resourceVersions written as
// the task asks: S for s, the initial state's, later for any newer one.
func after(srv *apiserver.Server, s string) []string {
	reqs := kit.Requests(srv, "pods", kit.RenameRVs(map[string]string{s: "S"}))
	if len(reqs) == 0 {
		return nil
	}
	return reqs[1:]
}

func requests(t *testing.T, wait time.Duration, fault func(srv *apiserver.Server)) []string {
	srv := kit.StartServer(t)
	kit.CreatePods(t, srv, "p", 2)
	s := srv.ResourceVersion()
	var out []string
	synctest.Test(t, func(t *testing.T) {
		r := reflector.NewReflector(kit.InProcessListWatch(srv, apiserver.Pods), &corev1.Pod{}, store.NewStore(store.MetaNamespaceKeyFunc), 0)
		r.SetWatchErrorHandler(func(*reflector.Reflector, error) {})
		stop := kit.Run(r.RunWithContext)
		defer stop()
		kit.WaitFor(t, "the watch", func() bool { return srv.WatchCount() == 1 })
		time.Sleep(wait)
		fault(srv)
		time.Sleep(30 * time.Second)
		out = after(srv, s)
	})
	return out
}

// refusedRequests runs Refused in real time over HTTP: a server restarted
// inside a synctest bubble would serve from the bubble and keep its fake
// clock from ever advancing. The watch is left open for over a second
// first, so that its end is not a "very short watch".
func refusedRequests(t *testing.T) []string {
	srv := kit.StartServer(t)
	kit.CreatePods(t, srv, "p", 2)
	s := srv.ResourceVersion()
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
	return after(srv, s)
}

func TestPrediction(t *testing.T) {
	truth := Requests{
		Close:      requests(t, 5*time.Second, func(s *apiserver.Server) { s.CloseWatches() }),
		QuickClose: requests(t, 100*time.Millisecond, func(s *apiserver.Server) { s.CloseWatches() }),
		Refused:    refusedRequests(t),
		Expired: requests(t, 5*time.Second, func(s *apiserver.Server) {
			_, _ = s.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c"}})
			s.Compact()
			s.CloseWatches()
		}),
		TooMany: requests(t, 5*time.Second, func(s *apiserver.Server) {
			s.Inject(apiserver.Fault{Verb: "watch", Status: http.StatusTooManyRequests})
			s.CloseWatches()
		}),
		Forbidden: requests(t, 5*time.Second, func(s *apiserver.Server) {
			s.Inject(apiserver.Fault{Verb: "watch", Status: http.StatusForbidden})
			s.CloseWatches()
		}),
	}
	if !reflect.DeepEqual(truth, Prediction) {
		// Neither which faults are wrong nor how many: a fault's
		// requests are one of a few shapes, and naming the wrong ones
		// would let a few runs find them.
		t.Errorf("Prediction: not the requests the server saw for all six faults. For each: does the reflector treat it as retriable (the same watch again, from which resourceVersion?) or does it end the cycle, so that the next fetches the whole state? The failure table in docs/03-reflector.md has the rules")
	}
}
