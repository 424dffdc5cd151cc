//go:build workshop

package informerfor

import (
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestInformerFor(t *testing.T) {
	kit.Returns(t, "InformerFor (50 goroutines per type)", func() { checkInformerFor(t) })
}

func checkInformerFor(t *testing.T) {
	srv := kit.StartServer(t)
	var r Registry
	var made atomic.Int32
	newFor := func(res apiserver.Resource, example runtime.Object) func() processor.SharedIndexInformer {
		return func() processor.SharedIndexInformer {
			made.Add(1)
			return processor.NewSharedIndexInformer(kit.ListWatch(t, srv, res), example, 0, nil)
		}
	}
	var wg sync.WaitGroup
	pods := make([]processor.SharedIndexInformer, 50)
	cms := make([]processor.SharedIndexInformer, 50)
	for i := range 50 {
		wg.Go(func() { pods[i] = r.InformerFor(&corev1.Pod{}, newFor(apiserver.Pods, &corev1.Pod{})) })
		wg.Go(func() { cms[i] = r.InformerFor(&corev1.ConfigMap{}, newFor(apiserver.ConfigMaps, &corev1.ConfigMap{})) })
	}
	wg.Wait()
	if n := made.Load(); n != 2 {
		t.Errorf("newFunc ran %d times for 100 calls over two types: want 2 (once per type)", n)
	}
	for i := range 50 {
		if pods[i] != pods[0] || cms[i] != cms[0] {
			t.Fatalf("caller %d got a different informer than caller 0 for the same type", i)
		}
	}
	if pods[0] == cms[0] {
		t.Errorf("pods and ConfigMaps got the same informer: key by the object's type")
	}
}
