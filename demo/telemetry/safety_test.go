package telemetry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run that ends before its first span leaves an existing --out file as
// it was (before, the file was emptied when the run started and then
// deleted as "empty"); a run with spans replaces it; neither leaves a
// temporary file behind.
func TestOutIsReplacedOnlyOnceItHasSpans(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "spans.json")
	require.NoError(t, os.WriteFile(out, []byte("the last run's spans\n"), 0o600))

	tel, err := New(context.Background(), "stdout", out, io.Discard)
	require.NoError(t, err)
	require.NoError(t, tel.Shutdown(context.Background()))
	got, err := os.ReadFile(out)
	require.NoError(t, err, "the file the run did not write is still there")
	assert.Equal(t, "the last run's spans\n", string(got))

	tel, err = New(context.Background(), "stdout", out, io.Discard)
	require.NoError(t, err)
	_, sp := tel.TP.Tracer("t").Start(context.Background(), "a span")
	sp.End()
	require.NoError(t, tel.Shutdown(context.Background()))
	got, err = os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(got), `"Name":"a span"`)
	if fi, err := os.Stat(out); assert.NoError(t, err) {
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the replaced file keeps its mode")
	}

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file left: %v", entries)

	_, err = New(context.Background(), "stdout", dir, io.Discard)
	assert.ErrorContains(t, err, "is a directory")
}

// Secrets in the endpoint URL (userinfo, query values) are never printed:
// not in where the spans went, not in a collector's error. And a
// collector's error of megabytes is one line of at most MaxMessage bytes
// and a count of the rest.
func TestEndpointSecretsAreMaskedAndCollectorMessagesCut(t *testing.T) {
	huge := strings.Repeat("the collector explains at length; ", 60_000) // ~2 MB
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		http.Error(w, huge, http.StatusBadRequest)
	}))
	t.Cleanup(srv.Close)
	endpoint := strings.Replace(srv.URL, "http://", "http://alice:s3cret-pass@", 1) + "/base?token=tok-123&tenant=acme"
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)

	tel, err := New(context.Background(), "otlp", "", io.Discard)
	require.NoError(t, err)
	for _, secret := range []string{"alice", "s3cret-pass", "tok-123", "acme"} {
		assert.NotContains(t, tel.Where, secret)
	}
	assert.Contains(t, tel.Where, "http://***@"+strings.TrimPrefix(srv.URL, "http://")+"/base/v1/traces?tenant=***&token=***")

	_, sp := tel.TP.Tracer("t").Start(context.Background(), "a span")
	sp.End()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = tel.Shutdown(ctx)
	require.Error(t, err)
	msg := err.Error()
	for _, secret := range []string{"s3cret-pass", "tok-123", "acme"} {
		assert.NotContains(t, msg, secret)
	}
	assert.NotContains(t, msg, "\n")
	assert.Less(t, len(msg), MaxMessage+100, "one line of reasonable length, not the collector's %d bytes", len(huge))
	assert.Contains(t, msg, "more bytes)")
	assert.Contains(t, msg, "the collector explains", "the start of the collector's message is kept")

	// A value that is not a URL Go can read is refused without its secrets.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://bob:hunter2@exa mple:4318/?key=k9")
	_, err = New(context.Background(), "otlp", "", io.Discard)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "hunter2")
	assert.NotContains(t, err.Error(), "k9")
}

func TestMaskURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:4318/v1/traces":            "http://localhost:4318/v1/traces",
		"https://u:p@c.example/v1/traces":            "https://***@c.example/v1/traces",
		"https://token@c.example/v1/traces?x=1&x=2":  "https://***@c.example/v1/traces?x=***",
		"http://c:4318/v1/traces?api_key=abc#frag":   "http://c:4318/v1/traces?api_key=***#***",
		`Post "http://c/v1/traces?sig=zz": refused`:  `Post "http://c/v1/traces?sig=***": refused`,
		"no url here, just text with a ? and an @ x": "no url here, just text with a ? and an @ x",
	} {
		assert.Equal(t, want, MaskURLs(in), in)
	}
	assert.Equal(t, "http://***@bad host/?***", MaskURL("http://u:p@bad host/?k=v"), "a URL Go cannot parse")
}

// An endpoint written without a scheme is masked like one with: its
// password is never printed. url.Parse reads "alice:S3CRETPW@host:4318"
// as scheme "alice" and an opaque rest, with no userinfo to mask; before,
// the demo's refusal of the variable printed it whole, password included.
func TestMaskURLWithoutAScheme(t *testing.T) {
	for in, want := range map[string]string{
		"alice:S3CRETPW@host:4318":            "***@host:4318",
		"alice:S3CRETPW@host:4318/v1/traces":  "***@host:4318/v1/traces",
		"alice:p/ss@w?rd@host:4318":           "***@host:4318",
		"alice:pw?x@host:4318/v1?token=t0k3n": "***@host:4318/v1?***",
		"//alice:S3CRETPW@host:4318":          "//***@host:4318",
		"/alice:S3CRETPW@host:4318":           "***@host:4318",
		"host:4318":                           "host:4318",
		"localhost:4318/v1/traces":            "localhost:4318/v1/traces",
	} {
		assert.Equal(t, want, MaskURL(in), in)
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		_, _, err := OTLPDestination(func(v string) string {
			if v == name {
				return "alice:S3CRETPW@collector.example:4318"
			}
			return ""
		})
		require.Error(t, err, name)
		assert.NotContains(t, err.Error(), "S3CRETPW", name)
		assert.NotContains(t, err.Error(), "alice", name)
		assert.Contains(t, err.Error(), name+`="***@collector.example:4318" is not an http:// or https:// URL with a host`)
	}
}
