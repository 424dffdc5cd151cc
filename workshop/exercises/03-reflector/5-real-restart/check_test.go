//go:build workshop

package realrestart

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestFindings(t *testing.T) {
	// What a part is for, not the part: the command is the answer. Only
	// the first part missing, so that the messages are no checklist to
	// complete without a cluster; Evidence needs a run anyway.
	for _, part := range []struct{ text, lacks string }{
		{"hack/local-cluster.sh env", "does not load the cluster's environment (without it the test finds no cluster)"},
		{"-tags e2e", "does not build the e2e tests (they are behind a build tag)"},
		{"TestRestartingKubeAPIServerMidWatchLosesNothing", "does not select the restart test (go test's -run)"},
		{"./test/e2e", "does not name the package of the e2e tests"},
	} {
		if !strings.Contains(Command, part.text) {
			t.Errorf("Command: yours %s", part.lacks)
			break
		}
	}
	if !evidence(Evidence) {
		t.Errorf("Evidence: not what a passing run of the restart test logs last (its namespace, then a digest of it): run the test against the cluster with -v, and copy what follows \"evidence: \"")
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
	arrived := ""
	for _, c := range s.Calls() {
		if c == "Add default/while-down" {
			arrived = "Add"
		} else if strings.HasPrefix(c, "Replace") && strings.Contains(c, "default/while-down") {
			arrived = "Replace"
		}
	}
	// One message for both: each is one of two values.
	if relisted != Relisted || arrived != WhileDownArrivesAs {
		t.Errorf("Relisted and WhileDownArrivesAs are not what the reflector did across the restart: is connection refused retriable, does the server still have the history after a restart, and so which store call brought while-down in (record them: kit.NewRecordingStore)?")
	}
}

// evidence reports whether s is what test/e2e's restartEvidence logs for
// some run: "e2e-<unix nanoseconds> <digest of it>". The digest is
// computed as there; a run's namespace is its own, so the line is only
// had by running the test (or by reading this function, which is not the
// exercise).
func evidence(s string) bool {
	ns, digest, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "evidence:")), " ")
	if !ok || !strings.HasPrefix(ns, "e2e-") {
		return false
	}
	if _, err := strconv.ParseInt(strings.TrimPrefix(ns, "e2e-"), 10, 64); err != nil {
		return false
	}
	sum := sha256.Sum256([]byte("informer-anatomy restart " + ns))
	return digest == hex.EncodeToString(sum[:6])
}
