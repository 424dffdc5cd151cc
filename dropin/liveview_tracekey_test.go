package dropin_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// keysTraced are the object and queue keys the recorded spans name, and
// how many spans named workqueue.process each key has.
func keysTraced(ss tracetest.SpanStubs) (keys []string, processed map[string]int) {
	processed = map[string]int{}
	for _, s := range ss {
		for _, a := range s.Attributes {
			if a.Key == tracing.KeyObjectKey || a.Key == tracing.KeyWorkqueueKey {
				if k := a.Value.AsString(); !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
				if s.Name == tracing.SpanWorkqueueProcess && a.Key == tracing.KeyWorkqueueKey {
					processed[a.Value.AsString()]++
				}
			}
		}
	}
	slices.Sort(keys)
	return keys, processed
}

// Trace one key from the page. Refused where the process's code did not
// opt in (LiveViewTraceOneKey), and, where it did, to a cross-origin POST
// (another site's page, by its Origin or its Sec-Fetch-Site) and to a
// request addressed to another Host: after each refusal every object is
// still traced. From the page's own origin the key is taken: ns/b and
// ns/a created after it, only ns/a's spans are recorded (its root, its
// handler call, its add, wait and reconcile), and the state says which
// key, on the read-only page too. Cleared, every object is traced again.
func TestLiveViewTraceOneKey(t *testing.T) {
	srv := startServer(t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	_, done := startController(t, srv, "tracekey-configmaps", "tracekey-queue", tp)

	opted := httptest.NewServer(dropin.LiveViewHandler(dropin.LiveViewTraceOneKey()))
	t.Cleanup(opted.Close)
	readOnly := httptest.NewServer(dropin.LiveViewHandler())
	t.Cleanup(readOnly.Close)
	post := func(base, key string, hdr map[string]string) (int, livepage.TraceKeyResult) {
		code, _, body := liveGet(t, http.DefaultClient, http.MethodPost, base+"/api/trace-key?key="+url.QueryEscape(key), hdr)
		var r livepage.TraceKeyResult
		_ = json.Unmarshal([]byte(body), &r)
		return code, r
	}
	state := func(base string) livepage.ProcessState {
		_, _, body := liveGet(t, http.DefaultClient, http.MethodGet, base+"/api/state", nil)
		var st livepage.ProcessState
		require.NoError(t, json.Unmarshal([]byte(body), &st))
		return st
	}
	t.Cleanup(func() { post(opted.URL, "", nil) })

	code, r := post(readOnly.URL, "ns/a", nil)
	assert.Equal(t, http.StatusForbidden, code, "not opted in")
	assert.Contains(t, r.Message, "dropin.LiveViewTraceOneKey()")
	assert.False(t, state(readOnly.URL).TraceKeyControl, "the read-only page shows no form")
	for _, hdr := range []map[string]string{
		{"Origin": "http://evil.example"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
		{"Host": "evil.example:" + opted.URL[strings.LastIndexByte(opted.URL, ':')+1:]},
	} {
		code, _ = post(opted.URL, "ns/a", hdr)
		assert.Equal(t, http.StatusForbidden, code, "%v", hdr)
	}
	assert.Empty(t, state(opted.URL).TracedKey, "no refusal set a key")
	_, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "before"}})
	require.NoError(t, err)
	testutil.Eventually(t, "ns/before done", func() bool { return done() == 1 })
	keys, _ := keysTraced(exp.GetSpans())
	assert.Equal(t, []string{"ns/before"}, keys, "every object traced before a key is chosen")

	exp.Reset()
	code, r = post(opted.URL, "ns/a", map[string]string{"Origin": opted.URL, "Sec-Fetch-Site": "same-origin"})
	require.Equal(t, http.StatusOK, code, r.Message)
	assert.Equal(t, "ns/a", r.Key)
	st := state(opted.URL)
	assert.True(t, st.TraceKeyControl)
	assert.Equal(t, "ns/a", st.TracedKey)
	assert.Equal(t, "ns/a", state(readOnly.URL).TracedKey, "the process's key, shown on every page")
	for _, n := range []string{"b", "a"} {
		_, err = srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: n}})
		require.NoError(t, err)
	}
	testutil.Eventually(t, "ns/b and ns/a done", func() bool { return done() == 3 })
	keys, processed := keysTraced(exp.GetSpans())
	assert.Equal(t, []string{"ns/a"}, keys, "only the chosen key's spans")
	assert.Equal(t, 1, processed["ns/a"], "its reconcile too")
	var names []string
	for _, s := range exp.GetSpans() {
		names = append(names, s.Name)
	}
	for _, want := range []string{"ListAndWatch watch", "workqueue.add", "workqueue.queued", "workqueue.process"} {
		assert.Contains(t, names, want)
	}

	exp.Reset()
	code, r = post(opted.URL, "", nil) // a client that is no browser: no Origin, as curl
	require.Equal(t, http.StatusOK, code, r.Message)
	assert.Empty(t, r.Key)
	assert.Empty(t, state(opted.URL).TracedKey)
	_, err = srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}})
	require.NoError(t, err)
	testutil.Eventually(t, "ns/c done", func() bool { return done() == 4 })
	keys, processed = keysTraced(exp.GetSpans())
	assert.Equal(t, []string{"ns/c"}, keys, "cleared: traced again")
	assert.Equal(t, 1, processed["ns/c"])

	code, _ = post(opted.URL, string(make([]byte, 600)), nil)
	assert.Equal(t, http.StatusBadRequest, code, "a key longer than any object's")
	assert.Empty(t, state(opted.URL).TracedKey)
}

// api/trace-key refuses 400, and changes nothing, what it cannot read
// whole (a body past its bound, a body that is no form, multipart
// included, a query of more than 10,000 parameters or one that does not
// parse), a request with no key= or two, and a key no object can have:
// the namespace not a DNS-1123 label, the name neither a DNS-1123
// subdomain nor a path segment name, a control character, bytes that are
// not UTF-8. Each refusal says what is wrong. Before, each of the first
// kind was read as the empty key and cleared the key someone else had
// chosen ("tracing restored", 200), and every malformed key was taken.
func TestLiveViewTraceKeyRefusesWhatItCannotRead(t *testing.T) {
	hs := httptest.NewServer(dropin.LiveViewHandler(dropin.LiveViewTraceOneKey()))
	t.Cleanup(hs.Close)
	send := func(query, contentType string, body io.Reader) (int, livepage.TraceKeyResult) {
		req, err := http.NewRequest(http.MethodPost, hs.URL+"/api/trace-key"+query, body)
		require.NoError(t, err)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		var r livepage.TraceKeyResult
		require.NoError(t, json.NewDecoder(res.Body).Decode(&r))
		return res.StatusCode, r
	}
	traced := func() string {
		_, _, body := liveGet(t, http.DefaultClient, http.MethodGet, hs.URL+"/api/state", nil)
		var st livepage.ProcessState
		require.NoError(t, json.Unmarshal([]byte(body), &st))
		return st.TracedKey
	}
	t.Cleanup(func() { send("?key=", "", nil) })
	code, r := send("?key=ns/chosen", "", nil)
	require.Equal(t, http.StatusOK, code, r.Message)

	var multipartBody bytes.Buffer
	mw := multipart.NewWriter(&multipartBody)
	require.NoError(t, mw.WriteField("key", ""))
	require.NoError(t, mw.Close())
	form := "application/x-www-form-urlencoded"
	for _, c := range []struct {
		name, query, contentType string
		body                     string
		says                     string
	}{
		{"a form body past the bound", "", form, "key=&pad=" + strings.Repeat("x", 5000), "a body of more than"},
		{"a form body past the bound, key in the query", "?key=", form, "pad=" + strings.Repeat("x", 5000), "a body of more than"},
		{"a multipart body", "", mw.FormDataContentType(), multipartBody.String(), "a body of type"},
		{"a text body", "", "text/plain", "key=", "a body of type"},
		{"more than 10,000 parameters", "?key=&" + strings.Repeat("a=1&", 10_000), "", "", "the query cannot be read"},
		{"a query that does not parse", "?key=%zz", "", "", "the query cannot be read"},
		{"a form that does not parse", "", form, "key=%zz", "the form cannot be read"},
		{"no key at all", "", "", "", "no key="},
		{"key twice", "?key=ns/a&key=", "", "", "key= given 2 times"},
		{"key in the query and the form", "?key=ns/a", form, "key=", "key= given 2 times"},
		{"a namespace in capitals", "?key=" + url.QueryEscape("NS/web"), "", "", `the namespace "NS"`},
		{"an underscore in the namespace", "?key=" + url.QueryEscape("my_ns/web"), "", "", `the namespace "my_ns"`},
		{"a namespace past 63 bytes", "?key=" + strings.Repeat("n", 64) + "/web", "", "", "must be no more than 63"},
		{"two slashes", "?key=" + url.QueryEscape("ns/web/x"), "", "", `the name "web/x"`},
		{"an empty namespace", "?key=" + url.QueryEscape("/web"), "", "", "the namespace is empty"},
		{"an empty name", "?key=" + url.QueryEscape("ns/"), "", "", "the name is empty"},
		{"a name that is ..", "?key=" + url.QueryEscape("ns/.."), "", "", "may not be '..'"},
		{"a percent in the name", "?key=" + url.QueryEscape("ns/a%b"), "", "", "may not contain '%'"},
		{"a space in the name", "?key=" + url.QueryEscape("ns/my web"), "", "", "a space"},
		{"a newline", "?key=" + url.QueryEscape("ns/web\n"), "", "", "control character"},
		{"a NUL", "?key=" + url.QueryEscape("ns/\x00web"), "", "", "control character"},
		{"an escape sequence", "?key=" + url.QueryEscape("ns/\x1b[2Jweb"), "", "", "control character"},
		{"a C1 control", "?key=" + url.QueryEscape("ns/web\u0085"), "", "", "control character"},
		{"not UTF-8", "?key=" + url.QueryEscape("ns/web\xff"), "", "", "not UTF-8"},
		{"past 512 bytes", "?key=ns/" + strings.Repeat("a", 600), "", "", "a key of 603 bytes"},
	} {
		code, r := send(c.query, c.contentType, strings.NewReader(c.body))
		assert.Equal(t, http.StatusBadRequest, code, "%s: %s", c.name, r.Message)
		assert.False(t, r.OK, c.name)
		assert.Contains(t, r.Message, "refused, nothing changed", c.name)
		assert.Contains(t, r.Message, c.says, c.name)
		assert.Equal(t, "ns/chosen", traced(), "%s: the key someone chose is kept", c.name)
	}

	for _, key := range []string{"ns/web-1", "kube-system/coredns.v2", "node-a.example.com", "kube-system/system:controller:job-controller", "system:kube-scheduler"} {
		code, r := send("?key="+url.QueryEscape(key), "", nil)
		assert.Equal(t, http.StatusOK, code, "%s: %s", key, r.Message)
		assert.Equal(t, key, traced())
	}
	code, r = send("", form, strings.NewReader("key=ns%2Fby-form"))
	assert.Equal(t, http.StatusOK, code, r.Message)
	assert.Equal(t, "ns/by-form", traced(), "a form body is read")
	code, r = send("?key=", "", nil)
	assert.Equal(t, http.StatusOK, code, r.Message)
	assert.Empty(t, traced(), "key= clears")
}
