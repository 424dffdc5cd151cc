package telemetry_test

import (
	"fmt"

	"github.com/informer-anatomy/informer-anatomy/demo/telemetry"
)

// Where --exporter otlp sends spans: the per-signal variable as it is, the
// base one plus /v1/traces, or the demo's plain-HTTP default; a value that
// is not an http(s) URL is refused rather than silently replaced.
func ExampleOTLPDestination() {
	for _, env := range []map[string]string{
		{},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"},
	} {
		dest, _, err := telemetry.OTLPDestination(func(k string) string { return env[k] })
		fmt.Println(dest, err != nil)
	}
	// Output:
	// http://localhost:4318/v1/traces false
	// http://collector:4318/v1/traces false
	//  true
}
