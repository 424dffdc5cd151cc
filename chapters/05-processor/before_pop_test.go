package processor

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

// SharedIndexInformerOptions.BeforePop reaches chapter 4's processLoop, on
// both queues: while the hook holds, the reflector has queued the initial
// state (its LastSyncResourceVersion is set) but nothing is popped, so no
// handler call comes and the informer has not synced; once the hook
// returns, both pods reach the handler. Without the plumbing the pods
// would be handled at once.
func TestBeforePopHoldsTheInformersPopLoop(t *testing.T) {
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	b := serverBackend{srv}
	b.create(t, "a")
	b.create(t, "b")
	for _, q := range []QueueKind{RealFIFOQueue, DeltaFIFOQueue} {
		t.Run(q.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				var mu sync.Mutex
				var calls int
				var added []string
				inf := NewSharedIndexInformerWithOptions(newInProcessLW(srv), &corev1.Pod{}, SharedIndexInformerOptions{
					Queue: q,
					BeforePop: func(ctx context.Context) {
						mu.Lock()
						calls++
						first := calls == 1
						mu.Unlock()
						if first {
							select {
							case <-release:
							case <-ctx.Done():
							}
						}
					},
				})
				_, err := inf.AddEventHandler(ResourceEventHandlerFuncs{AddFunc: func(obj any) {
					mu.Lock()
					defer mu.Unlock()
					added = append(added, obj.(interface{ GetName() string }).GetName())
				}})
				require.NoError(t, err)
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				defer func() { cancel(); wg.Wait() }()
				wg.Go(func() { inf.RunWithContext(ctx) })
				synctest.Wait()
				assert.NotEmpty(t, inf.LastSyncResourceVersion(), "the initial state is queued")
				assert.False(t, inf.HasSynced(), "held: the initial state is not popped")
				mu.Lock()
				assert.Empty(t, added, "held: no handler call")
				assert.Equal(t, 1, calls)
				mu.Unlock()

				close(release)
				synctest.Wait()
				assert.True(t, inf.HasSynced())
				mu.Lock()
				assert.ElementsMatch(t, []string{"a", "b"}, added)
				mu.Unlock()
			})
		})
	}
}
