package processor

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

// SharedIndexInformerOptions.ReflectorBackoff reaches the informer's
// reflector, on both queues: against a server that refuses every request,
// the requests come exactly the configured delay apart (fake time, in a
// synctest bubble), where the default would wait 800ms plus jitter.
func TestReflectorBackoffPacesTheInformersReflector(t *testing.T) {
	const delay = 7 * time.Second
	for _, q := range []QueueKind{RealFIFOQueue, DeltaFIFOQueue} {
		t.Run(q.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lw := &testutil.RefusingListerWatcher{}
				inf := NewSharedIndexInformerWithOptions(lw, &corev1.Pod{}, SharedIndexInformerOptions{
					Queue: q, ReflectorBackoff: &reflector.Backoff{Duration: delay},
				})
				// Not the default handler: apimachinery's HandleError paces
				// itself from a time taken outside the bubble, and would
				// sleep for years of fake time.
				require.NoError(t, inf.SetWatchErrorHandlerWithContext(func(context.Context, *reflector.Reflector, error) {}))
				testutil.RunFor(10*delay, inf.RunWithContext)
				gaps := lw.Gaps()
				require.GreaterOrEqual(t, len(gaps), 5, "the reflector retried every %v for 10 of them", delay)
				for i, d := range gaps {
					assert.Equal(t, delay, d, "gap %d", i)
				}
			})
		})
	}
}
