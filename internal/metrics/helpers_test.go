package metrics_test

import (
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// The global MeterProvider can be set once for good (the delegate follows
// only the first); every test of the package records into this one and
// tells its own series apart by name. dropin's TestMetricsProviderSetLater
// runs a provider set later, in a child process.
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
