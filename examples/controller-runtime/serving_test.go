package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The manager's metrics server, made from ManagerOptions' Metrics, does
// not let a client that never reads hold a handler: its write deadline
// (withDeadlines, shortened here) ends the handler's writes with an error,
// and the handler returns. controller-runtime's own server has no
// WriteTimeout, and no option sets one.
func TestMetricsServerLetsNoReaderHoldAHandler(t *testing.T) {
	defer func(r, w time.Duration) { metricsReadTimeout, metricsWriteTimeout = r, w }(metricsReadTimeout, metricsWriteTimeout)
	metricsWriteTimeout = 200 * time.Millisecond

	returned := make(chan error, 1)
	opts := ManagerOptions("").Metrics
	require.NotNil(t, opts.FilterProvider, "the metrics server's handlers get deadlines")
	opts.BindAddress = "127.0.0.1:0"
	// An answer far larger than the socket's buffers, as a big /metrics
	// page or many clients' answers are.
	opts.ExtraHandlers = map[string]http.Handler{"/big": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for range 256 {
			if _, err := w.Write(chunk); err != nil {
				returned <- err
				return
			}
		}
		returned <- nil
	})}
	srv, err := metricsserver.NewServer(opts, nil, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Start(ctx) })
	defer func() { cancel(); wg.Wait() }()
	bound := srv.(interface{ GetBindAddr() string })
	require.Eventually(t, func() bool { return bound.GetBindAddr() != "" }, 5*time.Second, time.Millisecond, "the metrics server listens")

	conn, err := net.Dial("tcp", bound.GetBindAddr())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("GET /big HTTP/1.1\r\nHost: " + bound.GetBindAddr() + "\r\n\r\n"))
	require.NoError(t, err)
	// The client never reads.
	select {
	case err := <-returned:
		assert.Error(t, err, "256 MB written to a client that reads nothing")
	case <-time.After(time.Minute):
		t.Fatal("the handler is still writing to a client that never reads: no write deadline")
	}
}

// The error handler the example installs writes a 2 MB OpenTelemetry
// error (a collector's answer, say) as one short line, and masks the
// password of a URL in it.
func TestOpenTelemetryErrorIsLoggedCut(t *testing.T) {
	previous := otel.GetErrorHandler()
	t.Cleanup(func() { otel.SetErrorHandler(previous) })
	var buf bytes.Buffer
	installErrorHandler(&buf)

	otel.Handle(errors.New(`traces export: failed to send to http://alice:S3CRETPW@collector:4318/v1/traces: 400 Bad Request (body: ` +
		strings.Repeat("x", 2<<20) + ")"))
	line := buf.String()
	assert.Equal(t, 1, strings.Count(line, "\n"), "one line")
	assert.True(t, strings.HasSuffix(line, "\n"))
	assert.Less(t, len(line), 512, "cut: %.80q…", line)
	assert.Contains(t, line, "more bytes)", "the line says it was cut")
	assert.NotContains(t, line, "S3CRETPW")
}
