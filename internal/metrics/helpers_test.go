package metrics_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// The global MeterProvider can be set once for good (the delegate follows
// only the first); every test of the package records into this one and
// tells its own series apart by name. The test of a provider set later runs
// in a child process (TestProviderSetLater).
var (
	globalOnce   sync.Once
	globalReader *sdkmetric.ManualReader
)

func installGlobal(t testing.TB) *sdkmetric.ManualReader {
	globalOnce.Do(func() {
		globalReader = sdkmetric.NewManualReader()
		otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(globalReader)))
	})
	return globalReader
}

func collect(t testing.TB, r *sdkmetric.ManualReader) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	return rm
}

// find returns the metric called name, or nil.
func find(rm metricdata.ResourceMetrics, name string) *metricdata.Metrics {
	for _, sm := range rm.ScopeMetrics {
		for i := range sm.Metrics {
			if sm.Metrics[i].Name == name {
				return &sm.Metrics[i]
			}
		}
	}
	return nil
}

func matches(set attribute.Set, want map[string]string) bool {
	if set.Len() != len(want) {
		return false
	}
	for k, v := range want {
		got, ok := set.Value(attribute.Key(k))
		if !ok || got.AsString() != v {
			return false
		}
	}
	return true
}

// point is one data point of metric name with exactly the attributes want:
// its value (sum or gauge) or, for a histogram, the histogram.
type point struct {
	found bool
	value float64
	hist  metricdata.HistogramDataPoint[float64]
}

func lookup(t testing.TB, rm metricdata.ResourceMetrics, name string, want map[string]string) point {
	t.Helper()
	m := find(rm, name)
	if m == nil {
		return point{}
	}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			if matches(p.Attributes, want) {
				return point{found: true, value: float64(p.Value)}
			}
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			if matches(p.Attributes, want) {
				return point{found: true, value: float64(p.Value)}
			}
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			if matches(p.Attributes, want) {
				return point{found: true, value: p.Value}
			}
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			if matches(p.Attributes, want) {
				return point{found: true, hist: p, value: float64(p.Count)}
			}
		}
	default:
		t.Fatalf("%s: unexpected data %T", name, m.Data)
	}
	return point{}
}
