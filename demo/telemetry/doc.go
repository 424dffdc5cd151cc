// Package telemetry is trace-demo's tracer provider: every span sampled,
// kept by a [Collector] for the terminal's waterfalls and summary, and
// sent to the chosen exporter (stdouttrace JSON, OTLP/HTTP, or none)
// through an export queue that drops and counts what the exporter cannot
// keep up with rather than make the informer wait.
//
// It sits above the chapters (demo/): only the demo's packages and
// programs import it.
package telemetry
