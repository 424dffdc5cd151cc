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

func TestPrediction(t *testing.T) {
	srv := kit.StartServer(t)
	kit.CreatePods(t, srv, "p", 2)
	first := srv.ResourceVersion()
	var bookmark string
	var got []string
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
		bookmark = srv.ResourceVersion()
		srv.SendBookmarks()
		synctest.Wait()
		srv.Compact()
		srv.CloseWatches()
		time.Sleep(30 * time.Second)
		got = kit.Requests(srv, "pods", kit.RenameRVs(map[string]string{first: "S", bookmark: "B"}))
	})
	if d := kit.DiffList(WithBookmark, got); d != "" {
		t.Errorf("WithBookmark: not the pod requests the server saw: %s. Which resourceVersion does the reflector hold when the watch closes, and is it older than the compaction?", d)
	}
}
