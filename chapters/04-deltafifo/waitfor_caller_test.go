package deltafifo

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// TestWaitForLogsTheCallersLine: WaitFor's "Waiting", "Done waiting" and
// "Timed out waiting" lines name the line that called WaitFor, on
// client-go's and ours alike (upstream's WithCallStackHelper); before, ours
// named its own lines in done.go.
func TestWaitForLogsTheCallersLine(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	done := queueChecker{name: "done", done: closed}
	never := queueChecker{name: "never", done: make(chan struct{})}
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
	for _, l := range theirs {
		require.Zero(t, l.Line, "client-go's %q names the call", l.Msg)
	}
	require.Equal(t, theirs, ours)
}
