package liveprobe

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
)

// What counting costs an object on its way into the cache, once a live
// view counts and a transform is set: the wrapped transform (the object
// sized before and after it) and Stored (the total moved). Each op is a
// new object (a copy, as decoded) replacing the one before under the same
// key. A watch event is given to the transform once; a streamed object
// twice, inside the stream's window, where it is also remembered until
// stored (CacheBytes.Transform).
func BenchmarkCacheBytesCounting(b *testing.B) {
	objs := make([]*corev1.ConfigMap, 1024)
	for i := range objs {
		objs[i] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("cm-", i), ResourceVersion: fmt.Sprint(i)},
			Data: map[string]string{"k": strings.Repeat("x", 1000)}}
	}
	for _, streamed := range []bool{false, true} {
		name := "a watch event"
		if streamed {
			name = "a streamed object"
		}
		b.Run(name, func(b *testing.B) {
			var c CacheBytes
			strip := c.Transform(func(o any) (any, error) { o.(*corev1.ConfigMap).Data = nil; return o, nil })
			c.Start(processor.NewSharedIndexInformerWithOptions(watchesInTurn(nil, nil), &corev1.ConfigMap{},
				processor.SharedIndexInformerOptions{Observer: processor.Observer{Stored: c.Stored}}))
			if streamed {
				c.Follow(NewReflectorProbe(watchesInTurn(nil, nil)))
				c.streams.window(true)
				defer c.streams.window(false)
			}
			var old any
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				out, err := strip(objs[i%len(objs)].DeepCopy())
				if err == nil && streamed {
					out, err = strip(out)
				}
				if err != nil {
					b.Fatal(err)
				}
				c.Stored(old, out)
				old = out
			}
		})
	}
}
