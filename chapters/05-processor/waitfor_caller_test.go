package processor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// TestWaitForLogsTheCallersLine: this chapter's WaitFor hands the wait to
// chapter 4's, one frame further down, and still logs the line that called
// it, as client-go's cache.WaitFor logs its caller's; before, every line
// named this chapter's informer.go.
func TestWaitForLogsTheCallersLine(t *testing.T) {
	theirs := testutil.WaitForLines(t, cache.WaitFor)
	ours := testutil.WaitForLines(t, WaitFor)
	require.Len(t, theirs, 3, "Waiting, Done waiting, Timed out waiting")
	require.Equal(t, theirs, ours)

	// Nothing is logged without what, on either.
	closed := make(chan struct{})
	close(closed)
	done := testutil.NewChecker("done", closed)
	require.Empty(t, testutil.CallerLines(t, func(ctx context.Context) (string, int) {
		require.True(t, cache.WaitFor(ctx, "", done))
		return testutil.Here(0)
	}))
	require.Empty(t, testutil.CallerLines(t, func(ctx context.Context) (string, int) {
		require.True(t, WaitFor(ctx, "", done))
		return testutil.Here(0)
	}))
}
