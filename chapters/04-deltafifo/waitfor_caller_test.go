package deltafifo

import (
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
	theirs := testutil.WaitForLines(t, cache.WaitFor)
	require.Len(t, theirs, 3, "Waiting, Done waiting, Timed out waiting")
	for _, l := range theirs {
		require.Zero(t, l.Line, "client-go's %q names the call", l.Msg)
	}
	require.Equal(t, theirs, testutil.WaitForLines(t, WaitFor))
}
