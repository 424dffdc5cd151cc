package testutil

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// PortForward does what `kubectl port-forward` (or an SSH tunnel) does for
// a browser: a listener on another loopback port that copies raw TCP both
// ways to target. It returns the forward's port; the test's cleanup closes
// the listener and every connection, and waits for the copies to end.
// Used by the live view's tests of a page reached through a forward
// (demo/liveview, dropin, examples/controller-runtime).
func PortForward(t testing.TB, target string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn // guarded by mu
	wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			wg.Go(func() { _, _ = io.Copy(out, in); _ = out.Close() })
			wg.Go(func() { _, _ = io.Copy(in, out); _ = in.Close() })
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	_, port, err := net.SplitHostPort(ln.Addr().String())
	require.NoError(t, err)
	return port
}
