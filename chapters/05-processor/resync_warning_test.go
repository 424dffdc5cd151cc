package processor

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// TestResyncPeriodWarningsAsUpstream: a handler's resync period that the
// informer cannot honour is changed and the change logged to the handler's
// HandlerOptions.Logger, in the same words and with the same values as
// client-go's, before Run and after.
func TestResyncPeriodWarningsAsUpstream(t *testing.T) {
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	for _, tc := range []struct {
		name                  string
		informerResync, asked time.Duration
		started               bool
		want                  int // lines client-go logs
	}{
		{name: "too small, informer without resync", informerResync: 0, asked: 500 * time.Millisecond, want: 2},
		{name: "informer without resync", informerResync: 0, asked: 5 * time.Second, want: 1},
		{name: "shorter than the check period before Run", informerResync: 10 * time.Second, asked: 2 * time.Second, want: 0},
		{name: "shorter than the check period after Run", informerResync: 10 * time.Second, asked: 2 * time.Second, started: true, want: 1},
		{name: "too small after Run", informerResync: 10 * time.Second, asked: time.Millisecond, started: true, want: 2},
		{name: "honoured", informerResync: 10 * time.Second, asked: 20 * time.Second, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				theirs := cache.NewSharedIndexInformer(newInProcessLW(srv), &corev1.Pod{}, tc.informerResync, nil)
				ours := NewSharedIndexInformer(newInProcessLW(srv), &corev1.Pod{}, tc.informerResync, nil)
				// A handler with no resync of its own is there first, as
				// in a controller: refitting it logs nothing on either.
				_, err := theirs.AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{}, cache.HandlerOptions{ResyncPeriod: new(time.Duration)})
				require.NoError(t, err)
				_, err = ours.AddEventHandlerWithOptions(ResourceEventHandlerFuncs{}, HandlerOptions{ResyncPeriod: new(time.Duration)})
				require.NoError(t, err)
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				defer func() { cancel(); wg.Wait() }()
				if tc.started {
					wg.Go(func() { theirs.RunWithContext(ctx) })
					wg.Go(func() { ours.RunWithContext(ctx) })
					synctest.Wait()
				}
				asked := tc.asked
				want := testutil.CaptureLogs(t, func(ctx context.Context) {
					logger := klog.FromContext(ctx)
					_, err := theirs.AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{}, cache.HandlerOptions{Logger: &logger, ResyncPeriod: &asked})
					require.NoError(t, err)
				})
				got := testutil.CaptureLogs(t, func(ctx context.Context) {
					logger := klog.FromContext(ctx)
					_, err := ours.AddEventHandlerWithOptions(ResourceEventHandlerFuncs{}, HandlerOptions{Logger: &logger, ResyncPeriod: &asked})
					require.NoError(t, err)
				})
				require.Len(t, want, tc.want, "client-go's lines: %v", want)
				require.Equal(t, texts(want), texts(got))
			})
		})
	}
}

func texts(lines []testutil.LogLine) []string {
	var out []string
	for _, l := range lines {
		out = append(out, l.Text)
	}
	return out
}
