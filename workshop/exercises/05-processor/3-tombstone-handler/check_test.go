//go:build workshop

package tombstonehandler

import (
	"slices"
	"testing"
	"time"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestLiveSurvivesATombstone(t *testing.T) {
	srv := kit.StartServer(t)
	kit.CreatePods(t, srv, "p", 3)
	live, rec := &Live{}, &kit.Recorder{}
	inf := kit.StartInformer(t, srv, kit.InformerOptions{Queue: processor.RealFIFOQueue}, live, rec)
	if got, want := live.Keys(), []string{"default/p-0", "default/p-1", "default/p-2"}; !slices.Equal(got, want) {
		t.Fatalf("after the initial list: Live has %q, want %q (OnAdd)", got, want)
	}
	if err := srv.Delete(apiserver.Pods, "default", "p-2"); err != nil {
		t.Fatal(err)
	}
	kit.WaitFor(t, "the delete of p-2", func() bool { return rec.Len() == 4 })
	if slices.Contains(live.Keys(), "default/p-2") {
		t.Errorf("after a watched delete of p-2 Live still has it (OnDelete with a *corev1.Pod)")
	}

	time.Sleep(1500 * time.Millisecond) // so the watch's end is not a "very short watch"
	srv.Stop()
	if err := srv.Delete(apiserver.Pods, "default", "p-0"); err != nil {
		t.Fatal(err)
	}
	srv.Compact()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	kit.WaitFor(t, "the tombstone of p-0", func() bool {
		return slices.ContainsFunc(rec.Calls(), func(c kit.Call) bool { return c.Tombstone })
	})
	inf.Stop()
	want := inf.GetStore().ListKeys()
	slices.Sort(want)
	if got := live.Keys(); !slices.Equal(got, want) {
		t.Errorf("after a delete found by a relist (DeletedFinalStateUnknown): Live has %q, the cache %q", got, want)
	}
}
