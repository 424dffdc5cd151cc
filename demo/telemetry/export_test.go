package telemetry

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// stuckExporter is a collector that never answers: every export waits
// until its context ends.
type stuckExporter struct {
	started   atomic.Int64 // exports begun
	cancelled atomic.Int64 // exports that ended by their context
	shut      atomic.Bool
}

func (s *stuckExporter) ExportSpans(ctx context.Context, _ []sdktrace.ReadOnlySpan) error {
	s.started.Add(1)
	<-ctx.Done()
	s.cancelled.Add(1)
	return ctx.Err()
}

func (s *stuckExporter) Shutdown(context.Context) error { s.shut.Store(true); return nil }

// countExporter takes every span at once and counts them.
type countExporter struct {
	mu sync.Mutex
	n  int
}

func (c *countExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += len(spans)
	return nil
}

func (c *countExporter) Shutdown(context.Context) error { return nil }

// Behind an exporter that never answers, ending a span never waits: the
// queue takes what fits, the rest is dropped and counted; Shutdown gives
// up when its context ends and cancels the export under way.
func TestExportQueueDropsAndCountsInsteadOfWaiting(t *testing.T) {
	exp := &stuckExporter{}
	q := newExportQueueSized(exp, 10, 5)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(q))
	const spans = 1000
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tr := tp.Tracer("test")
		for range spans {
			_, s := tr.Start(context.Background(), "x")
			s.End()
		}
	}()
	select {
	case <-ended:
	case <-time.After(time.Minute): // a deadline to fail by, not a timing
		t.Fatal("ending spans waited on an exporter that never answers")
	}
	// At most the queue and one batch in the exporter's hands were taken.
	assert.GreaterOrEqual(t, q.Dropped(), int64(spans-10-5))
	assert.Less(t, q.Dropped(), int64(spans))

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := tp.Shutdown(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	require.Eventually(t, func() bool { return exp.cancelled.Load() == exp.started.Load() }, 10*time.Second, time.Millisecond,
		"the export under way was cancelled when Shutdown gave up")
	assert.True(t, exp.shut.Load(), "the exporter was shut down")
}

// With an exporter that keeps up, nothing is dropped and Shutdown exports
// every span still queued.
func TestExportQueueExportsEverySpanItKeeps(t *testing.T) {
	exp := &countExporter{}
	q := newExportQueueSized(exp, 1<<12, 64)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(q))
	tr := tp.Tracer("test")
	for range 3000 {
		_, s := tr.Start(context.Background(), "x")
		s.End()
	}
	require.NoError(t, tp.Shutdown(context.Background()))
	exp.mu.Lock()
	defer exp.mu.Unlock()
	assert.Equal(t, 3000-int(q.Dropped()), exp.n)
	assert.Zero(t, q.Dropped(), "a queue of 4096 holds 3000 spans")
}
