//go:build workshop

package realrestart

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestFindings(t *testing.T) {
	for _, part := range []string{"hack/local-cluster.sh env", "-tags e2e", "TestRestartingKubeAPIServerMidWatchLosesNothing", "./test/e2e"} {
		if !strings.Contains(Command, part) {
			t.Errorf("Command %q lacks %q: without it the test does not build, is not selected, or finds no cluster", Command, part)
		}
	}

	srv := kit.StartServer(t)
	kit.CreatePods(t, srv, "p", 2)
	s := kit.NewRecordingStore()
	r := reflector.NewReflector(kit.ListWatch(t, srv, apiserver.Pods), &corev1.Pod{}, s, 0)
	r.SetWatchErrorHandler(func(*reflector.Reflector, error) {})
	stop := kit.Run(r.RunWithContext)
	defer stop()
	kit.WaitFor(t, "the watch", func() bool { return srv.WatchCount() == 1 })
	time.Sleep(1500 * time.Millisecond) // not a "very short watch"
	srv.Stop()
	if _, err := srv.Create(kit.Pod("", "while-down")); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	kit.WaitFor(t, "the new pod in the store", func() bool { _, ok, _ := s.GetByKey("default/while-down"); return ok })
	relisted := kit.CountStateFetches(srv.Requests(), "pods") > 1 // the first stream, and any relist
	if relisted != Relisted {
		t.Errorf("Relisted: you wrote %v; the embedded server saw %q", Relisted, kit.Requests(srv, "pods", nil))
	}
	arrived := ""
	for _, c := range s.Calls() {
		if c == "Add default/while-down" {
			arrived = "Add"
		} else if strings.HasPrefix(c, "Replace") && strings.Contains(c, "default/while-down") {
			arrived = "Replace"
		}
	}
	if arrived != WhileDownArrivesAs {
		t.Errorf("WhileDownArrivesAs: you wrote %q; the store's calls were %q", WhileDownArrivesAs, s.Calls())
	}
}
