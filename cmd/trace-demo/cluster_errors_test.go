package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statusProxy answers every request that match selects with a Status of
// the given code, reason and message, and passes the rest to an embedded
// API server.
func statusProxy(t *testing.T, match func(*http.Request) bool, code int, reason, message string) string {
	t.Helper()
	body, err := json.Marshal(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason, "message": message})
	require.NoError(t, err)
	return proxy(t, startServer(t), func(w http.ResponseWriter, r *http.Request) bool {
		if !match(r) {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write(body)
		return true
	})
}

func every(*http.Request) bool { return true }

// The API server's own message reaches the user, on the preflight and on
// the informer's own requests: "etcd is down" (a 500), who may not do what
// (a 403). Before, the first read `an error on the server ("unknown")`,
// the second `unknown (get pods)`.
func TestClusterErrorsKeepTheServersMessage(t *testing.T) {
	u := statusProxy(t, every, http.StatusInternalServerError, "InternalError", "etcd is down")
	r := runDemo(t, context.Background(), "--kubeconfig", kubeconfig(t, u, false), "--exporter", "none")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "failed to list pods in all namespaces (HTTP 500): etcd is down")
	assert.NotContains(t, r.stderr, `"unknown"`)

	u = statusProxy(t, every, http.StatusForbidden, "Forbidden", `pods is forbidden: User "bob" cannot list resource "pods" in API group "" at the cluster scope`)
	r = runDemo(t, context.Background(), "--kubeconfig", kubeconfig(t, u, false), "--exporter", "none")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `The server said: pods is forbidden: User "bob" cannot list resource "pods" in API group "" at the cluster scope`)
	assert.NotContains(t, r.stderr, "unknown (get pods)")
}

// A 403 on the informer's own LIST (after the preflight passed) is printed
// once: it ends the run, so it is not also a "the informer retries"
// warning. Before, it was printed twice. The informer's first request, its
// stream, is refused too: a 403 is not retried, so the reflector falls
// back to the LIST (and, as client-go's, tells no handler of the stream's
// refusal).
func TestForbiddenAfterThePreflightIsPrintedOnce(t *testing.T) {
	u := statusProxy(t, func(r *http.Request) bool {
		q := r.URL.Query()
		stream := q.Get("watch") == "true" && q.Get("sendInitialEvents") == "true"
		return r.Method == http.MethodGet && (stream || q.Get("watch") != "true" && q.Get("limit") != "1")
	}, http.StatusForbidden, "Forbidden", `pods is forbidden: User "bob" cannot list resource "pods"`)
	r := runDemo(t, context.Background(), "--kubeconfig", kubeconfig(t, u, false), "--exporter", "none")
	assert.Equal(t, 1, r.code, r.stdout)
	assert.Equal(t, 1, strings.Count(r.stderr, `User "bob" cannot list`), "once:\n%s", r.stderr)
	assert.NotContains(t, r.stderr, "the informer retries")
}

// Server text is shown, not obeyed: an escape sequence or a line break in
// a message reaches the terminal escaped. Before, it reached it raw (a
// server could recolour the screen, or print a fake line).
func TestServerTextIsEscapedForTheTerminal(t *testing.T) {
	u := statusProxy(t, every, http.StatusInternalServerError, "InternalError", "etcd \x1b[31mis down\x1b[0m\ntrace-demo: all good\u202e")
	r := runDemo(t, context.Background(), "--kubeconfig", kubeconfig(t, u, false), "--exporter", "none")
	assert.Equal(t, 1, r.code)
	assert.NotContains(t, r.stderr, "\x1b", "no raw escape character")
	assert.NotContains(t, r.stderr, "\u202e")
	assert.Contains(t, r.stderr, `etcd \x1b[31mis down\x1b[0m\ntrace-demo: all good\u202e`)
	assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
}

// A refused connection is said as such, at once: not "within 10s" (the
// preflight's bound) after a refusal that took a millisecond.
func TestRefusedConnectionSaysSo(t *testing.T) {
	dead := startServer(t)
	url := dead.URL
	dead.Stop()
	r := runDemo(t, context.Background(), "--kubeconfig", kubeconfig(t, url, false), "--exporter", "none")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "cannot reach the API server at "+url+" (context ctx): nothing accepts connections there (connection refused)")
	assert.NotContains(t, r.stderr, "within")
}

// A run that fails before its first span leaves an existing --out file as
// it was: before, the file was emptied when the run started and then
// deleted as "empty".
func TestAFailedRunLeavesAnExistingOutAlone(t *testing.T) {
	dead := startServer(t)
	url := dead.URL
	dead.Stop()
	out := filepath.Join(t.TempDir(), "spans.json")
	require.NoError(t, os.WriteFile(out, []byte("yesterday's spans\n"), 0o644))
	r := runDemo(t, context.Background(), "--kubeconfig", kubeconfig(t, url, false), "--out", out)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "cannot reach the API server")
	got, err := os.ReadFile(out)
	require.NoError(t, err, "the demo deleted a file it did not write")
	assert.Equal(t, "yesterday's spans\n", string(got))
	entries, err := os.ReadDir(filepath.Dir(out))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left behind")
}

// Ctrl-C while the API server has not answered says that the user
// stopped the run, not that the cluster may be down.
func TestCtrlCBeforeTheServerAnswersSaysSo(t *testing.T) {
	srv := startServer(t)
	u := proxy(t, srv, func(w http.ResponseWriter, r *http.Request) bool {
		<-r.Context().Done() // never answers
		return true
	})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	r := runDemo(t, ctx, "--kubeconfig", kubeconfig(t, u, false), "--exporter", "none")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "stopped (Ctrl-C) before the API server at "+u+" (context ctx) answered the list of pods")
	assert.NotContains(t, r.stderr, "Is the cluster running")
	assert.NotContains(t, r.stderr, "within")
}
