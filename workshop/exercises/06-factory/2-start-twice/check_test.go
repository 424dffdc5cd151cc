//go:build workshop

package starttwice

import (
	"testing"

	factory "github.com/informer-anatomy/informer-anatomy/chapters/06-factory"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestFindings(t *testing.T) {
	srv := kit.StartServer(t)
	kit.CreatePods(t, srv, "p", 3)
	client, err := factory.NewForConfig(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	f := factory.NewSharedInformerFactory(client, 0)
	stop := make(chan struct{})
	defer f.Shutdown()
	defer close(stop)
	f.Core().V1().Pods().Informer()
	f.Start(stop)
	f.WaitForCacheSync(stop)
	kit.WaitFor(t, "the pod watch", func() bool { return srv.WatchCount() == 1 })
	f.Core().V1().ConfigMaps().Informer()
	f.Start(stop)
	f.WaitForCacheSync(stop)
	kit.WaitFor(t, "the configmap watch", func() bool { return srv.WatchCount() == 2 })
	reqs := srv.Requests()
	got := [3]int{kit.CountRequests(reqs, "list", "pods"), kit.CountRequests(reqs, "watch", "pods"), kit.CountRequests(reqs, "list", "configmaps")}
	if want := [3]int{PodLists, PodWatches, ConfigMapLists}; got != want {
		t.Errorf("PodLists, PodWatches, ConfigMapLists: you wrote %v, the server saw %v", want, got)
	}
}
