package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/informer-anatomy/informer-anatomy/dropin"
)

// liveViewPath is where the live view of this controller is mounted: its
// page, and its state at liveViewPath + "api/state".
const liveViewPath = "/debug/informers/"

// liveViewMux is the controller's own mux with the live view on it, as a
// controller that already serves /healthz or /metrics would add it: one
// Handle line. The page shows every dropin informer and traced queue of
// the process (here the ConfigMap informer, its handler and the
// "configmap-status" queue), read-only.
func liveViewMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle(liveViewPath, dropin.LiveViewHandler())
	return mux
}

// serveLiveView listens on addr and serves liveViewMux until ctx ends. It
// returns the page's URL, and wait, which returns once the server has
// stopped.
func serveLiveView(ctx context.Context, addr string) (url string, wait func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("--live-view-addr %s: %w", addr, err)
	}
	hs := newServer(liveViewMux())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "clientgo-controller: live view:", err)
		}
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	return "http://" + ln.Addr().String() + liveViewPath, func() { <-done }, nil
}
