package testutil_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// Every GET is made, timed and decoded; the largest body is kept and the
// last answer is what into holds.
func TestTimedGetsReadsEveryAnswer(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		i := n.Add(1)
		fmt.Fprintf(w, `{"n": %d, "pad": %q}`, i, strings.Repeat("a", int(i)))
	}))
	defer srv.Close()
	var got struct{ N int }
	g := testutil.TimedGets(t, srv.URL, 5, &got)
	require.Len(t, g.Times, 5)
	require.Equal(t, 5, got.N, "the last answer")
	require.Equal(t, len(fmt.Sprintf(`{"n": %d, "pad": %q}`, 5, "aaaaa")), g.MaxBody)
	require.LessOrEqual(t, g.Median(), g.Slowest())
	require.Contains(t, g.String(), "of 5; body up to")
}
