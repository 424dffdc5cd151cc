//go:build workshop

package tombstonerv

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	factory "github.com/informer-anatomy/informer-anatomy/chapters/06-factory"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestFinding(t *testing.T) {
	srv := kit.StartServer(t)
	pods := kit.CreatePods(t, srv, "p", 2)
	spans := kit.NewSpans()
	client, err := factory.NewForConfig(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	f := factory.NewSharedInformerFactoryWithOptions(client, 0, factory.WithTracerProvider(spans.Provider()))
	rec := &kit.Recorder{}
	inf := f.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	f.Start(stop)
	f.WaitForCacheSync(stop)
	defer f.Shutdown()
	defer close(stop)

	changed := pods[0].DeepCopy()
	changed.Labels = map[string]string{"v": "2"}
	obj, err := srv.Update(changed)
	if err != nil {
		t.Fatal(err)
	}
	lastKnown := obj.(*corev1.Pod).ResourceVersion
	kit.WaitFor(t, "the update", func() bool { return rec.Len() == 3 })
	time.Sleep(1500 * time.Millisecond) // not a "very short watch"
	srv.Stop()
	if err := srv.Delete(apiserver.Pods, "default", "p-0"); err != nil {
		t.Fatal(err)
	}
	deletion := srv.ResourceVersion()
	if _, err := srv.Create(kit.Pod("", "new")); err != nil {
		t.Fatal(err)
	}
	srv.Compact()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	kit.WaitFor(t, "the tombstone", func() bool {
		return slices.ContainsFunc(rec.Calls(), func(c kit.Call) bool { return c.Tombstone })
	})
	list := inf.LastSyncResourceVersion()
	var rv string
	kit.WaitFor(t, "the tombstone's root span", func() bool {
		for _, s := range spans.Named("ListAndWatch watchlist", "default/p-0") {
			if kit.Attr(s, "informer.event.type") == "TOMBSTONE" {
				rv = kit.Attr(s, "informer.resource_version")
				return true
			}
		}
		return false
	})
	kit.WaitFor(t, "the relist handled", func() bool { return rec.Len() >= 6 })
	got := map[string]string{lastKnown: "last known", list: "list", deletion: "deletion"}[rv]
	switch {
	case TombstoneRV != "last known" && TombstoneRV != "list" && TombstoneRV != "deletion":
		t.Errorf("TombstoneRV: you wrote %q; write one of the three answers the doc comment names", TombstoneRV)
	case kit.NamesOff(Calls, rec.Strings()):
		// Said alone: the reasoning is judged once the names are right.
		t.Errorf("Calls: your calls follow the handler's, but name the pods otherwise than a kit.Recorder writes them: the task gives their names and namespace, and its Strings() writes each as its key")
	case got != TombstoneRV || !slices.Equal(Calls, rec.Strings()):
		// One message: naming which of the two is wrong would leave a
		// choice of three to try.
		t.Errorf("your findings do not match the run: the tombstone's root span (its informer.resource_version), or the handler's calls (you wrote %d, in order). Which state of p-0 did the informer last know, and what does one ReplacedAll entry on the RealFIFO call, in which order?", len(Calls))
	}
}
