package store

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kcache "k8s.io/client-go/tools/cache"
)

// benchIndexer is the method set both implementations share, so one workload
// function drives either.
type benchIndexer interface {
	Add(any) error
	Update(any) error
	List() []any
	ByIndex(string, string) ([]any, error)
}

const benchObjects = 10000

// benchPods are 10k pods over 100 namespaces, with a changed copy of each for
// Update (same namespace, so Update takes the "index value unchanged" path, as
// most real updates do).
func benchPods() (pods, updated []*corev1.Pod) {
	for i := range benchObjects {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns-" + strconv.Itoa(i%100), Name: "pod-" + strconv.Itoa(i), ResourceVersion: strconv.Itoa(i),
		}}
		u := p.DeepCopy()
		u.ResourceVersion = strconv.Itoa(benchObjects + i)
		pods, updated = append(pods, p), append(updated, u)
	}
	return pods, updated
}

// BenchmarkIndexer runs ours and client-go's on the same workload, one
// sub-benchmark each: BenchmarkIndexer/<op>/ours and BenchmarkIndexer/<op>/client-go.
// hack/benchtable turns the output into the ratio table of docs/performance.md.
func BenchmarkIndexer(b *testing.B) {
	pods, updated := benchPods()
	impls := []struct {
		name string
		make func() benchIndexer
	}{
		{"ours", func() benchIndexer {
			return NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
		}},
		{"client-go", func() benchIndexer {
			return kcache.NewIndexer(kcache.MetaNamespaceKeyFunc, kcache.Indexers{kcache.NamespaceIndex: kcache.MetaNamespaceIndexFunc})
		}},
	}
	filled := func(make func() benchIndexer) benchIndexer {
		idx := make()
		for _, p := range pods {
			_ = idx.Add(p)
		}
		return idx
	}

	// each runs body as the sub-benchmarks op/ours and op/client-go, with
	// allocations reported; body makes its indexer with the constructor it
	// is given and times its own b.Loop.
	each := func(op string, body func(b *testing.B, newIndexer func() benchIndexer)) {
		b.Run(op, func(b *testing.B) {
			for _, impl := range impls {
				b.Run(impl.name, func(b *testing.B) {
					b.ReportAllocs()
					body(b, impl.make)
				})
			}
		})
	}

	each("Add", func(b *testing.B, newIndexer func() benchIndexer) {
		idx := newIndexer()
		i := 0
		for b.Loop() {
			_ = idx.Add(pods[i%benchObjects])
			i++
		}
	})
	each("Update", func(b *testing.B, newIndexer func() benchIndexer) {
		idx := filled(newIndexer)
		i := 0
		for b.Loop() {
			if i%2 == 0 {
				_ = idx.Update(updated[i/2%benchObjects])
			} else {
				_ = idx.Update(pods[i/2%benchObjects])
			}
			i++
		}
	})
	each("ByIndex", func(b *testing.B, newIndexer func() benchIndexer) {
		idx := filled(newIndexer)
		i := 0
		for b.Loop() {
			got, _ := idx.ByIndex(NamespaceIndex, "ns-"+strconv.Itoa(i%100))
			if len(got) != benchObjects/100 {
				b.Fatalf("ByIndex returned %d objects", len(got))
			}
			i++
		}
	})
	each("List", func(b *testing.B, newIndexer func() benchIndexer) {
		idx := filled(newIndexer)
		for b.Loop() {
			if got := idx.List(); len(got) != benchObjects {
				b.Fatalf("List returned %d objects", len(got))
			}
		}
	})
}
