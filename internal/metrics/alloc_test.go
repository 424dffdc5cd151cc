package metrics_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/internal/metrics"
)

// TestRecordsAllocateNothing: a record runs once per handler call, pop and
// queue call, so it must not allocate. A fresh variadic option passed to
// an OTel instrument's method escapes to the heap: each recorder passes a
// slice made once.
func TestRecordsAllocateNothing(t *testing.T) {
	installGlobal(t)
	in := metrics.NewInformer(metrics.InformerID{Name: "allocs"}, func() (metrics.InformerState, bool) { return metrics.InformerState{}, false })
	h := in.Handler("l#0")
	p := metrics.WorkqueueProvider{}
	depth, adds, latency, gauge := p.NewDepthMetric("allocs"), p.NewAddsMetric("allocs"), p.NewLatencyMetric("allocs"), p.NewUnfinishedWorkSecondsMetric("allocs")
	for name, f := range map[string]func(){
		"handler":   func() { h(time.Millisecond) },
		"processed": func() { in.Processed(time.Millisecond) },
		"depth":     func() { depth.Inc(); depth.Dec() },
		"adds":      func() { adds.Inc() },
		"latency":   func() { latency.Observe(0.001) },
		"gauge":     func() { gauge.Set(1) },
	} {
		require.Zero(t, testing.AllocsPerRun(100, f), name)
	}
}
