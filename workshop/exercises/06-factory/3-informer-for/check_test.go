//go:build workshop

package informerfor

// The answer is concurrent code: the runner runs this checker under the
// race detector, never from the test cache.
//
//workshop:concurrent

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestInformerFor(t *testing.T) {
	kit.Returns(t, "InformerFor (50 goroutines per type)", func() {
		// Several rounds, each with a fresh Registry: a racy answer must
		// fail every run, not one in two.
		for range rounds {
			if !checkInformerFor(t) {
				return
			}
		}
	})
}

const rounds = 5

// checkInformerFor reports whether the round passed. Every goroutine
// waits at a starting line, and newFunc takes a moment to build the
// informer, as a real one does: a check of the map and a store done under
// two separate holds of the lock (or none) then lets several callers
// build, every time.
func checkInformerFor(t *testing.T) bool {
	srv := kit.StartServer(t)
	var r Registry
	var made atomic.Int32
	newFor := func(res apiserver.Resource, example runtime.Object) func() processor.SharedIndexInformer {
		return func() processor.SharedIndexInformer {
			made.Add(1)
			time.Sleep(5 * time.Millisecond)
			return processor.NewSharedIndexInformer(kit.ListWatch(t, srv, res), example, 0, nil)
		}
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	pods := make([]processor.SharedIndexInformer, 50)
	cms := make([]processor.SharedIndexInformer, 50)
	for i := range 50 {
		wg.Go(func() { <-start; pods[i] = r.InformerFor(&corev1.Pod{}, newFor(apiserver.Pods, &corev1.Pod{})) })
		wg.Go(func() {
			<-start
			cms[i] = r.InformerFor(&corev1.ConfigMap{}, newFor(apiserver.ConfigMaps, &corev1.ConfigMap{}))
		})
	}
	close(start)
	wg.Wait()
	ok := true
	if n := made.Load(); n != 2 {
		t.Errorf("newFunc ran %d times for 100 concurrent calls over two types: want 2 (once per type). Between finding a type missing and storing its informer, can another caller find it missing too?", n)
		ok = false
	}
	for i := range 50 {
		if pods[i] != pods[0] || cms[i] != cms[0] {
			t.Errorf("caller %d got a different informer than caller 0 for the same type", i)
			return false
		}
	}
	if pods[0] == cms[0] {
		t.Errorf("pods and ConfigMaps got the same informer: key by the object's type")
		ok = false
	}
	return ok
}
