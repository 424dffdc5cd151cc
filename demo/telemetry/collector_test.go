package telemetry

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Past its limit the collector keeps no partial trace: a trace whose
// spans straddle the limit is left out whole (and counted past the limit),
// so the closing contract check never sees a trace cut by the collector as
// a broken one. Traces that began after the limit are absent; traces that
// ended before it are whole.
func TestCollectorKeepsTracesWholeOrAbsentPastItsLimit(t *testing.T) {
	c := &Collector{Limit: 5}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(c))
	tr := tp.Tracer("test")
	ctx := context.Background()
	// whole: 2 spans, both before the limit.
	wctx, whole := tr.Start(ctx, "whole")
	_, child := tr.Start(wctx, "whole.child")
	child.End()
	whole.End()
	// straddling: 3 spans end before the limit, its root after it.
	sctx, straddling := tr.Start(ctx, "straddling")
	for range 3 {
		_, s := tr.Start(sctx, "straddling.child")
		s.End()
	}
	// Now 5 spans are kept: the limit. late: a trace begun after it.
	_, late := tr.Start(ctx, "late")
	late.End()
	straddling.End()

	spans, dropped := c.Snapshot()
	var names []string
	ids := map[trace.TraceID]bool{}
	for _, s := range spans {
		names = append(names, s.Name)
		ids[s.TraceID] = true
	}
	assert.Equal(t, []string{"whole.child", "whole"}, names)
	assert.Len(t, ids, 1)
	assert.Equal(t, 5, dropped, "late's root, straddling's root and its 3 kept children")
	assert.Equal(t, 7, c.Count(), "every span is counted, kept or not")
	require.NoError(t, tp.Shutdown(ctx))
}
