package processor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// checker is a DoneChecker of a channel.
type checker struct {
	name string
	ch   chan struct{}
}

func (c checker) Name() string          { return c.name }
func (c checker) Done() <-chan struct{} { return c.ch }

// TestWaitForLogsTheCallersLine: this chapter's WaitFor hands the wait to
// chapter 4's, one frame further down, and still logs the line that called
// it, as client-go's cache.WaitFor logs its caller's; before, every line
// named this chapter's informer.go.
func TestWaitForLogsTheCallersLine(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	done, never := checker{"done", closed}, checker{"never", make(chan struct{})}
	canceled := func(ctx context.Context) context.Context {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		return ctx
	}
	theirs := testutil.CallerLines(t, func(ctx context.Context) (string, int) {
		file, line := testutil.Here(0)
		cache.WaitFor(canceled(ctx), "sync", done, never)
		return file, line + 1
	})
	ours := testutil.CallerLines(t, func(ctx context.Context) (string, int) {
		file, line := testutil.Here(0)
		WaitFor(canceled(ctx), "sync", done, never)
		return file, line + 1
	})
	require.Len(t, theirs, 3, "Waiting, Done waiting, Timed out waiting")
	require.Equal(t, theirs, ours)

	// Nothing is logged without what, on either.
	require.Empty(t, testutil.CallerLines(t, func(ctx context.Context) (string, int) {
		require.True(t, cache.WaitFor(ctx, "", done))
		return testutil.Here(0)
	}))
	require.Empty(t, testutil.CallerLines(t, func(ctx context.Context) (string, int) {
		require.True(t, WaitFor(ctx, "", done))
		return testutil.Here(0)
	}))
}
