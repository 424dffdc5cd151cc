package dropin

import (
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

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
//     pod the table has seen (steady state), made just before (in the CPU's
//     cache, as a reflector's just-decoded object is) and timed alone with
//     the collector off (so it is the transform's own work);
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
				// Each update is transformed right after it was made, as
				// a reflector transforms what it just decoded (so it is in
				// the CPU's cache), in batches of 32 timed alone.
				runtime.GC()
				old := debug.SetGCPercent(-1)
				var cpu time.Duration
				var allocs uint64
				batch := make([]*corev1.Pod, 32)
				for i := 0; i < n; i += len(batch) {
					for j := range batch {
						batch[j] = gen.Pod(((i+j)*7919)%n, 1, "x")
					}
					_, _, a0, _ := scalegen.ReadHeap()
					c := cputime.Process()
					for _, p := range batch {
						_, _ = tab.Transform(p)
					}
					cpu += cputime.Process() - c
					_, _, a1, _ := scalegen.ReadHeap()
					allocs += a1 - a0
					if i%(32*64) == 0 {
						debug.SetGCPercent(old) // collect the batches now and then
						runtime.GC()
						debug.SetGCPercent(-1)
					}
				}
				debug.SetGCPercent(old)
				a1, a0 := allocs, uint64(0)
				b.ReportMetric(float64(cpu)/n, "cpu-ns/update")
				b.ReportMetric(float64(a1-a0)/n, "allocs/update")
				runtime.KeepAlive(pods)
			}
		})
	}
}
