package processor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
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
				var mu sync.Mutex
				var at []time.Time
				refuse := func() error {
					mu.Lock()
					defer mu.Unlock()
					at = append(at, time.Now())
					return errors.New("refused")
				}
				lw := &reflector.ListWatch{
					ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
						return nil, refuse()
					},
					WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
						return nil, refuse()
					},
				}
				inf := NewSharedIndexInformerWithOptions(lw, &corev1.Pod{}, SharedIndexInformerOptions{
					Queue: q, ReflectorBackoff: &reflector.Backoff{Duration: delay},
				})
				// Not the default handler: apimachinery's HandleError paces
				// itself from a time taken outside the bubble, and would
				// sleep for years of fake time.
				require.NoError(t, inf.SetWatchErrorHandlerWithContext(func(context.Context, *reflector.Reflector, error) {}))
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { defer close(done); inf.RunWithContext(ctx) }()
				time.Sleep(10 * delay)
				cancel()
				<-done
				mu.Lock()
				defer mu.Unlock()
				var gaps []time.Duration
				for i := 1; i < len(at); i++ {
					if d := at[i].Sub(at[i-1]); d > 0 {
						gaps = append(gaps, d)
					}
				}
				require.GreaterOrEqual(t, len(gaps), 5, "the reflector retried every %v for 10 of them", delay)
				for i, d := range gaps {
					assert.Equal(t, delay, d, "gap %d", i)
				}
			})
		})
	}
}
