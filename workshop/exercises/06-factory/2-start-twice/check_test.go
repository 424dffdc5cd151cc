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
	streams := func(resource string) int {
		return kit.CountStateFetches(reqs, resource) - kit.CountRequests(reqs, "list", resource)
	}
	got := [3]int{streams("pods"), kit.CountRequests(reqs, "watch", "pods") - streams("pods"), streams("configmaps")}
	if want := [3]int{PodStreams, PodWatches, ConfigMapStreams}; got != want {
		t.Errorf("PodStreams, PodWatches, ConfigMapStreams: you wrote %v, the server saw %v", want, got)
	}
}
