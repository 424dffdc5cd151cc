package dropin

import (
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/informer-anatomy/informer-anatomy/internal/cputime"
	"github.com/informer-anatomy/informer-anatomy/internal/scalegen"
)

// The StringTable variants measured, and the unique package in the
// table's place (viaUnique) for comparison.
var tableVariants = []struct {
	name string
	mk   func() *StringTable
}{
	{"none", nil},
	{"strings", func() *StringTable { return NewStringTable(StringTableOptions{}) }},
	{"strings+FieldsV1", func() *StringTable { return NewStringTable(StringTableOptions{ShareFieldsV1: true}) }},
	{"unique-package", func() *StringTable { s := NewStringTable(StringTableOptions{}); s.viaUnique = true; return s }},
}

// BenchmarkStringTable measures, on 20,000 scalegen pods (run it with
// -benchtime=1x; docs/scale.md's "One copy of what repeats" quotes it):
//
//   - heap-B/pod: the live heap per pod once every pod has been through the
//     transform (the table, its slots and what it keeps included), as an
//     informer's cache would hold them;
//   - cpu-ns/update: the process's CPU per Transform of a fresh update of a
//     pod the table has seen (steady state), timed alone with the collector
//     off (so it is the transform's own work);
//   - allocs/update: heap allocations per such Transform.
func BenchmarkStringTable(b *testing.B) {
	const n = 20000
	gen := scalegen.NewGenerator(1)
	for _, v := range tableVariants {
		b.Run(v.name, func(b *testing.B) {
			for range b.N {
				base := scalegen.LiveHeap()
				var tab *StringTable
				if v.mk != nil {
					tab = v.mk()
				}
				pods := make([]*corev1.Pod, n)
				for i := range pods {
					pods[i] = gen.Pod(i, 0, strconv.Itoa(i+1))
					if tab != nil {
						if _, err := tab.Transform(pods[i]); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(scalegen.LiveHeap()-base)/n, "heap-B/pod")
				if tab == nil {
					continue
				}
				upd := make([]*corev1.Pod, n)
				for i := range upd {
					upd[i] = gen.Pod((i*7919)%n, 1, "x")
				}
				runtime.GC()
				old := debug.SetGCPercent(-1)
				_, _, a0, _ := scalegen.ReadHeap()
				c := cputime.Process()
				for _, p := range upd {
					_, _ = tab.Transform(p)
				}
				cpu := cputime.Process() - c
				_, _, a1, _ := scalegen.ReadHeap()
				debug.SetGCPercent(old)
				b.ReportMetric(float64(cpu)/n, "cpu-ns/update")
				b.ReportMetric(float64(a1-a0)/n, "allocs/update")
				runtime.KeepAlive(pods)
			}
		})
	}
}
