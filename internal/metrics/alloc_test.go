package metrics_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/internal/metrics"
)

// TestRecordsAllocateNothing: a record runs once per handler call and
// queue call, so it must not allocate. A fresh variadic option passed to
// an OTel instrument's method escapes to the heap: each recorder passes a
// slice made once.
func TestRecordsAllocateNothing(t *testing.T) {
	installGlobal(t)
	id := metrics.HandlerID{Name: "allocs", Handler: "l#0"}
	pending := metrics.OTelHandlerProvider{}.NewPendingNotificationsMetric(id)
	handler := metrics.OTelHandlerProvider{}.NewHandlerProcessingLatencyMetric(id)
	p := metrics.WorkqueueProvider{}
	depth, adds, latency, gauge := p.NewDepthMetric("allocs"), p.NewAddsMetric("allocs"), p.NewLatencyMetric("allocs"), p.NewUnfinishedWorkSecondsMetric("allocs")
	for name, f := range map[string]func(){
		"handler": func() { handler.Observe(0.001) },
		"pending": func() { pending.Set(3) },
		"depth":   func() { depth.Inc(); depth.Dec() },
		"adds":    func() { adds.Inc() },
		"latency": func() { latency.Observe(0.001) },
		"gauge":   func() { gauge.Set(1) },
	} {
		require.Zero(t, testing.AllocsPerRun(100, f), name)
	}
}
