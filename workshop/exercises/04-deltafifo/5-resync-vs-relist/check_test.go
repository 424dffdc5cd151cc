//go:build workshop

package resyncrelist

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

// run runs the informer for 5 seconds, then fault and 30 more seconds:
// the pod requests of both, and whether a Sync delta came.
func run(t *testing.T, fault func(*apiserver.Server)) (first, after []string, syncs bool) {
	srv := kit.StartServer(t)
	kit.CreatePods(t, srv, "p", 2)
	s := srv.ResourceVersion()
	rename := kit.RenameRVs(map[string]string{s: "S"})
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		_, c := deltafifo.NewInformer(kit.InProcessListWatch(srv, apiserver.Pods), &corev1.Pod{}, time.Second,
			func(_ context.Context, d deltafifo.Delta, _ any, _ bool) {
				if d.Type == deltafifo.Sync {
					n.Add(1)
				}
			})
		stop := kit.Run(c.RunWithContext)
		defer stop()
		time.Sleep(5 * time.Second)
		first = kit.Requests(srv, "pods", rename)
		syncs = n.Load() > 0
		if fault != nil {
			fault(srv)
			time.Sleep(30 * time.Second)
			after = kit.Requests(srv, "pods", rename)[len(first):]
		}
	})
	return first, after, syncs
}

func TestFindings(t *testing.T) {
	first, _, syncs := run(t, nil)
	// One message for both: one about SyncDeltas alone would say which
	// yes/no value to flip.
	if !slices.Equal(Requests, first) || syncs != SyncDeltas {
		t.Errorf("Requests and SyncDeltas are not what the first five seconds did: what does a resync send to the server, and what does it put in the queue?")
	}
	_, cc, _ := run(t, func(s *apiserver.Server) { s.Compact(); s.CloseWatches() })
	if d := kit.DiffList(AfterCompactAndClose, cc); d != "" {
		t.Errorf("AfterCompactAndClose: not the pod requests after Compact and CloseWatches: %s. Is the reflector's resourceVersion older than the compaction?", d)
	}
	_, wcc, _ := run(t, func(s *apiserver.Server) {
		_, _ = s.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c"}})
		s.Compact()
		s.CloseWatches()
	})
	if d := kit.DiffList(AfterWriteCompactAndClose, wcc); d != "" {
		t.Errorf("AfterWriteCompactAndClose: not the pod requests after the write, Compact and CloseWatches: %s. Where is the reflector's resourceVersion now, compared with the compaction?", d)
	}
}
