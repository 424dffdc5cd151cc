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
	rename := func(rv string) string {
		if rv == "" {
			return rv
		}
		return "later"
	}
	if d := kit.DiffList(Pods, kit.Requests(srv, "pods", rename)); d != "" {
		t.Errorf("Pods: not the pod requests the server saw: %s. What does the second Start do with an informer that is running already?", d)
	}
	if d := kit.DiffList(ConfigMaps, kit.Requests(srv, "configmaps", rename)); d != "" {
		t.Errorf("ConfigMaps: not the ConfigMap requests the server saw: %s. How does a new informer fetch its state, and does it need another request to go on watching?", d)
	}
}
