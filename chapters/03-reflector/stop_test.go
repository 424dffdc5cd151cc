package reflector

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// Stopping a reflector while a request is in flight is not a failure:
// ListAndWatch returns nil, as its doc comment promises, and the
// WatchErrorHandler hears nothing.
func TestStopWhileARequestIsInFlightReportsNothing(t *testing.T) {
	for _, tc := range []struct {
		name, verb string
		opts       ReflectorOptions
	}{
		{"LIST", "list", ReflectorOptions{UseWatchList: listFirst}},
		{"WATCH", "watch", ReflectorOptions{UseWatchList: listFirst}},
		{"watch-list (the default)", "watch", ReflectorOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.createPods("a", 1)
			release := e.srv.StallNext(tc.verb)
			defer release()
			errs := &errorLog{}
			r := newTestReflector(e.lw, newRecordingStore(), errs, tc.opts)

			ctx, cancel := context.WithCancel(context.Background())
			got := make(chan error, 1)
			go func() { got <- r.ListAndWatchWithContext(ctx) }()
			testutil.Eventually(t, "request held", func() bool { return len(e.requests(tc.verb)) == 1 })
			cancel()
			assert.NoError(t, <-got, "ListAndWatch returns nil when stopped")

			// The same through Run, whose reports go to the handler.
			release2 := e.srv.StallNext(tc.verb)
			defer release2()
			ctx2, cancel2 := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); r.RunWithContext(ctx2) }()
			testutil.Eventually(t, "second request held", func() bool { return len(e.requests(tc.verb)) >= 2 })
			cancel2()
			<-done
			assert.Empty(t, errs.all(), "a stop reports nothing")
		})
	}
}
