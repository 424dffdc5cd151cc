//go:build workshop

package bookmarks

import (
	"fmt"
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

func relists(t *testing.T, bookmark bool) bool {
	srv := kit.StartServer(t)
	kit.CreatePods(t, srv, "p", 2)
	var fetches int // streams and LISTs: the first, and any relist
	synctest.Test(t, func(t *testing.T) {
		r := reflector.NewReflector(kit.InProcessListWatch(srv, apiserver.Pods), &corev1.Pod{}, store.NewStore(store.MetaNamespaceKeyFunc), 0)
		r.SetWatchErrorHandler(func(*reflector.Reflector, error) {})
		stop := kit.Run(r.RunWithContext)
		defer stop()
		kit.WaitFor(t, "the watch", func() bool { return srv.WatchCount() == 1 })
		time.Sleep(5 * time.Second)
		for i := range 3 {
			if _, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprint("c", i)}}); err != nil {
				t.Fatal(err)
			}
		}
		if bookmark {
			srv.SendBookmarks()
			synctest.Wait()
		}
		srv.Compact()
		srv.CloseWatches()
		time.Sleep(30 * time.Second)
		fetches = kit.CountStateFetches(srv.Requests(), "pods")
	})
	return fetches > 1
}

func TestPredictions(t *testing.T) {
	if got := relists(t, false); got != RelistWithoutBookmark {
		t.Errorf("RelistWithoutBookmark: you predicted %v, not what the reflector did", RelistWithoutBookmark)
	}
	if got := relists(t, true); got != RelistWithBookmark {
		t.Errorf("RelistWithBookmark: you predicted %v, not what the reflector did", RelistWithBookmark)
	}
}
