package deltafifo

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// Config.ReflectorBackoff reaches the controller's reflector: against a
// server that refuses every request, the requests come exactly the
// configured delay apart (fake time, in a synctest bubble). Without it the
// default's 800ms-plus-jitter gaps would fail the check, so the test also
// shows that nil keeps the default.
func TestConfigReflectorBackoffPacesTheControllersReflector(t *testing.T) {
	const delay = 7 * time.Second
	gaps := func(b *reflector.Backoff) []time.Duration {
		var got []time.Duration
		synctest.Test(t, func(t *testing.T) {
			lw := &testutil.RefusingListerWatcher{}
			c := New(&Config{
				Queue:            NewDeltaFIFOWithOptions(DeltaFIFOOptions{}),
				ListerWatcher:    lw,
				ObjectType:       &corev1.Pod{},
				Process:          func(any, bool) error { return nil },
				ReflectorBackoff: b,
				// Not the default handler: apimachinery's HandleError
				// paces itself from a time taken outside the bubble, and
				// would sleep for years of fake time.
				WatchErrorHandlerWithContext: func(context.Context, *reflector.Reflector, error) {},
			})
			testutil.RunFor(10*delay, c.RunWithContext)
			got = lw.Gaps()
		})
		return got
	}

	custom := gaps(&reflector.Backoff{Duration: delay})
	require.GreaterOrEqual(t, len(custom), 5, "the reflector retried every %v for 10 of them", delay)
	for i, d := range custom {
		assert.Equal(t, delay, d, "gap %d", i)
	}

	def := gaps(nil)
	require.NotEmpty(t, def)
	assert.NotEqual(t, delay, def[0], "nil keeps the default pacing")
	assert.GreaterOrEqual(t, def[0], reflector.DefaultBackoff().Duration, "nil keeps the default pacing")
}
