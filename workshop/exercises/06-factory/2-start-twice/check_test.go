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
	for _, c := range []struct {
		name, what string
		you, saw   int
	}{
		{"PodStreams", "pod streams (WATCHes with sendInitialEvents=true)", PodStreams, streams("pods")},
		{"PodWatches", "plain pod WATCHes", PodWatches, kit.CountRequests(reqs, "watch", "pods") - streams("pods")},
		{"ConfigMapStreams", "ConfigMap streams", ConfigMapStreams, streams("configmaps")},
	} {
		if c.you != c.saw {
			t.Errorf("%s: you wrote %d, not the number of %s the server saw", c.name, c.you, c.what)
		}
	}
}
