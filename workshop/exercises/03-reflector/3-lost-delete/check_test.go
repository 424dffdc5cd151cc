//go:build workshop

package lostdelete

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestFindings(t *testing.T) {
	srv := kit.StartServer(t)
	kit.CreatePods(t, srv, "p", 2)
	s := kit.NewRecordingStore()
	var mu sync.Mutex
	var codes []int
	r := reflector.NewReflector(kit.ListWatch(t, srv, apiserver.Pods), &corev1.Pod{}, s, 0)
	r.SetWatchErrorHandler(func(_ *reflector.Reflector, err error) {
		var st apierrors.APIStatus
		if errors.As(err, &st) {
			mu.Lock()
			codes = append(codes, int(st.Status().Code))
			mu.Unlock()
		}
	})
	stop := kit.Run(r.RunWithContext)
	defer stop()
	kit.WaitFor(t, "the watch", func() bool { return srv.WatchCount() == 1 })
	time.Sleep(1500 * time.Millisecond)
	srv.Stop()
	if err := srv.Delete(apiserver.Pods, "default", "p-0"); err != nil {
		t.Fatal(err)
	}
	srv.Compact()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	kit.WaitFor(t, "p-0 to leave the store", func() bool { _, ok, _ := s.GetByKey("default/p-0"); return !ok })

	removedBy := ""
	for _, c := range s.Calls() {
		switch {
		case c == "Delete default/p-0":
			removedBy = "Delete"
		case strings.HasPrefix(c, "Replace") && !strings.Contains(c, "default/p-0"):
			removedBy = "Replace"
		}
	}
	if RemovedBy != removedBy {
		t.Errorf("RemovedBy: you wrote %q, not the store call that removed p-0 (record them: kit.NewRecordingStore)", RemovedBy)
	}
	mu.Lock()
	defer mu.Unlock()
	switch {
	case len(codes) == 0:
		t.Errorf("Status: the WatchErrorHandler saw no API error this time; run the checker again")
	case Status != codes[0]:
		t.Errorf("Status: you wrote %d, not the status code of the first API error the WatchErrorHandler saw (SetWatchErrorHandler). The reflector wraps the errors it hands over (fmt.Errorf with %%w), so a type assertion on err finds no status: errors.As(err, &status) with a var status apierrors.APIStatus does, and apierrors.ReasonForError(err) names the reason", Status)
	}
}
