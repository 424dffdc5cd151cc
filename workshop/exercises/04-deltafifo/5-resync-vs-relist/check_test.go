//go:build workshop

package resyncrelist

import (
	"context"
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

type truth struct {
	streams, lists, watches int
	syncs                   bool
	relisted                bool
}

func run(t *testing.T, fault func(*apiserver.Server)) truth {
	srv := kit.StartServer(t)
	kit.CreatePods(t, srv, "p", 2)
	var out truth
	synctest.Test(t, func(t *testing.T) {
		var syncs atomic.Int32
		_, c := deltafifo.NewInformer(kit.InProcessListWatch(srv, apiserver.Pods), &corev1.Pod{}, time.Second,
			func(_ context.Context, d deltafifo.Delta, _ any, _ bool) {
				if d.Type == deltafifo.Sync {
					syncs.Add(1)
				}
			})
		stop := kit.Run(c.RunWithContext)
		defer stop()
		time.Sleep(5 * time.Second)
		reqs := srv.Requests()
		out.lists = kit.CountRequests(reqs, "list", "pods")
		out.streams = kit.CountStateFetches(reqs, "pods") - out.lists
		out.watches = kit.CountRequests(reqs, "watch", "pods") - out.streams
		out.syncs = syncs.Load() > 0
		if fault != nil {
			fault(srv)
			time.Sleep(30 * time.Second)
			out.relisted = kit.CountStateFetches(srv.Requests(), "pods") > out.streams+out.lists
		}
	})
	return out
}

func TestFindings(t *testing.T) {
	quiet := run(t, nil)
	if quiet.streams != Streams {
		t.Errorf("Streams: you wrote %d, not the number of streams (WATCHes with sendInitialEvents=true) the server saw in those five seconds", Streams)
	}
	if quiet.lists != Lists {
		t.Errorf("Lists: you wrote %d, not the number of LISTs the server saw in those five seconds", Lists)
	}
	if quiet.watches != Watches {
		t.Errorf("Watches: you wrote %d, not the number of plain WATCHes the server saw in those five seconds", Watches)
	}
	if quiet.syncs != SyncDeltas {
		t.Errorf("SyncDeltas: you wrote %v, not what reached the process function", SyncDeltas)
	}
	cc := run(t, func(s *apiserver.Server) { s.Compact(); s.CloseWatches() })
	if cc.relisted != CompactAndClose {
		t.Errorf("CompactAndClose: you wrote %v, not what the reflector did", CompactAndClose)
	}
	wcc := run(t, func(s *apiserver.Server) {
		_, _ = s.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c"}})
		s.Compact()
		s.CloseWatches()
	})
	if wcc.relisted != WriteCompactAndClose {
		t.Errorf("WriteCompactAndClose: you wrote %v, not what the reflector did", WriteCompactAndClose)
	}
}
