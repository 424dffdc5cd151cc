//go:build workshop

package requests

import (
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
	var got []string
	synctest.Test(t, func(t *testing.T) {
		s := store.NewStore(store.MetaNamespaceKeyFunc)
		r := reflector.NewReflector(kit.InProcessListWatch(srv, apiserver.Pods), &corev1.Pod{}, s, 0)
		stop := kit.Run(r.RunWithContext)
		defer stop()
		kit.WaitFor(t, "the watch", func() bool { return srv.WatchCount() == 1 })
		time.Sleep(5 * time.Second)
		if _, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c"}}); err != nil {
			t.Fatal(err)
		}
		srv.Compact()
		srv.CloseWatches()
		time.Sleep(30 * time.Second)
		got = kit.Requests(srv, "pods", kit.RenameRVs(map[string]string{first: "S"}))
	})
	if d := kit.DiffList(Requests, got); d != "" {
		t.Errorf("Requests: you predicted %q, not the pod requests the server saw: %s", Requests, d)
	}
}
