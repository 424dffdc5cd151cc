package dropin

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
)

// LiveViewOption configures [LiveViewHandler].
//
// Ours: client-go has no live view.
type LiveViewOption func(*liveViewConfig)

type liveViewConfig struct {
	traceOneKey bool
}

// LiveViewTraceOneKey lets the page narrow the process's tracing to one
// object: a key typed on the page (e.g. "default/web") is POSTed to
// api/trace-key, and from then on every informer of this package starts
// an object's trace only for that key (and only where its own trace filter,
// [Informer.SetTraceFilter], would start one too); the traced queues follow,
// as they follow the informer's filter. The spans of every other object,
// in your exporter as on the page, stop until the key is cleared (an empty
// key), which restores what was traced before. A key no object can have
// (Kubernetes' name rules), or a request the handler cannot read whole, is
// refused 400 and changes nothing. The key is the process's,
// whichever page chose it; it changes nothing else: no object, no handler,
// no queue, only which traces start.
//
// It is an option, off unless your code passes it, because the page has
// no login: anyone who can reach the listener (and the handler's
// Host/Origin rules, those of the demo's controls: a browser page of
// another site cannot) could hide every other object's traces from your
// exporter. Pass it on a listener only you reach (loopback, or a
// port-forward):
//
//	mux.Handle("/debug/informers/", dropin.LiveViewHandler(dropin.LiveViewTraceOneKey()))
//
// Ours: client-go does not trace.
func LiveViewTraceOneKey() LiveViewOption {
	return func(c *liveViewConfig) { c.traceOneKey = true }
}

// liveTraceKey is the one key the page asked to trace, nil for none. Each
// informer's traceFilter loads it (one atomic load per delta, and only
// while tracing is on).
var liveTraceKey atomic.Pointer[string]

// maxTraceKey bounds a key: an object key is a namespace (63) and a name
// (253 for most kinds) and a slash.
const maxTraceKey = 512

// maxTraceKeyBody bounds a request's body: a form of one key, escaped.
const maxTraceKeyBody = 4 * maxTraceKey

// serveTraceKey sets or clears the traced key: POST api/trace-key with
// key= (in the query, as the page sends it, or in a form body); an empty
// key clears it. Refused 403 when the process did not opt in. The Host and
// cross-origin checks ran before. A request it cannot read whole (a body
// past its bound or of another type than a form, a query or form that
// does not parse, more than 10,000 parameters among them), one without
// key= or with it twice, and a key no object can have, are refused 400
// and change nothing: read as an empty key, they would clear a key
// someone else chose.
func serveTraceKey(w http.ResponseWriter, r *http.Request, cfg liveViewConfig) {
	if !cfg.traceOneKey {
		livepage.WriteJSON(w, http.StatusForbidden, livepage.TraceKeyResult{Message: "refused: this live view is read-only; " +
			"tracing one key from the page is on only where the process's code passes dropin.LiveViewTraceOneKey() to dropin.LiveViewHandler"})
		return
	}
	key, err := readTraceKey(w, r)
	if err == nil {
		err = checkTraceKey(key)
	}
	if err != nil {
		livepage.WriteJSON(w, http.StatusBadRequest, livepage.TraceKeyResult{Message: "refused, nothing changed: " + err.Error()})
		return
	}
	if key == "" {
		liveTraceKey.Store(nil)
		livepage.WriteJSON(w, http.StatusOK, livepage.TraceKeyResult{OK: true,
			Message: "tracing restored: every object the informers' own filters select starts a trace again"})
		return
	}
	liveTraceKey.Store(&key)
	livepage.WriteJSON(w, http.StatusOK, livepage.TraceKeyResult{OK: true, Key: key,
		Message: fmt.Sprintf("only %q starts a trace now (in every dropin informer of this process, and the queues they feed); clear the key to restore", key)})
}

// keyHelp says what api/trace-key takes.
const keyHelp = "send key=namespace/name (or key=name for a cluster-scoped object) to trace one object, key= (empty) to trace as before"

// readTraceKey reads key= from the query and, if the request has a body,
// from it as a form (application/x-www-form-urlencoded, at most
// maxTraceKeyBody bytes): exactly once, or an error. net/http's FormValue
// would read every failure (a body past the bound, multipart, a query of
// too many parameters) as no key at all.
func readTraceKey(w http.ResponseWriter, r *http.Request) (string, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return "", fmt.Errorf("the query cannot be read (%v): %s", err, keyHelp)
	}
	keys := q["key"]
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxTraceKeyBody))
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		return "", fmt.Errorf("a body of more than %d bytes; a key is at most %d: %s", mbe.Limit, maxTraceKey, keyHelp)
	}
	if err != nil {
		return "", fmt.Errorf("the body cannot be read: %v", err)
	}
	if len(body) > 0 {
		ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if ct != "application/x-www-form-urlencoded" {
			return "", fmt.Errorf("a body of type %q; the key goes in the query or in a form (application/x-www-form-urlencoded): %s", r.Header.Get("Content-Type"), keyHelp)
		}
		f, err := url.ParseQuery(string(body))
		if err != nil {
			return "", fmt.Errorf("the form cannot be read (%v): %s", err, keyHelp)
		}
		keys = append(keys, f["key"]...)
	}
	switch len(keys) {
	case 0:
		return "", errors.New("no key=: " + keyHelp)
	case 1:
		return keys[0], nil
	default:
		return "", fmt.Errorf("key= given %d times: give it once; %s", len(keys), keyHelp)
	}
}

// checkTraceKey accepts "" (trace as before) and a key an object can have,
// as client-go's MetaNamespaceKeyFunc makes it: "namespace/name", or
// "name" for a cluster-scoped object. The namespace is a DNS-1123 label,
// as every namespace's name is. The name is a DNS-1123 subdomain, the
// rule of nearly every kind; or, for the kinds whose names may be any
// path segment (RBAC's roles and bindings: "system:controller:…"), a path
// segment name as apimachinery validates it (no "/" or "%", not "." or
// ".."), without spaces. No control character, anywhere, nor anything
// that is not UTF-8: a key is echoed on the page and compared with the
// objects' keys.
func checkTraceKey(key string) error {
	if key == "" {
		return nil
	}
	if len(key) > maxTraceKey {
		return fmt.Errorf("a key of %d bytes; an object key is at most %d", len(key), maxTraceKey)
	}
	if !utf8.ValidString(key) {
		return fmt.Errorf("%q is not UTF-8: no object key is", key)
	}
	for i, c := range key {
		if unicode.IsControl(c) {
			return fmt.Errorf("%q has a control character (%U) at byte %d: no object key has", key, c, i)
		}
	}
	ns, name, namespaced := strings.Cut(key, "/")
	if !namespaced {
		ns, name = "", key
	}
	bad := func(what string, errs []string) error {
		return fmt.Errorf("%q is not an object key (namespace/name, or name for a cluster-scoped object): %s: %s", key, what, strings.Join(errs, "; "))
	}
	if namespaced {
		if ns == "" {
			return bad("the namespace is empty", []string{"give one, or no slash for a cluster-scoped object"})
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return bad(fmt.Sprintf("the namespace %q", ns), errs)
		}
	}
	if name == "" {
		return bad("the name is empty", []string{"give the object's name"})
	}
	dnsErrs := validation.IsDNS1123Subdomain(name)
	if len(dnsErrs) == 0 {
		return nil
	}
	if strings.ContainsFunc(name, unicode.IsSpace) {
		return bad(fmt.Sprintf("the name %q", name), append(dnsErrs, "and it has a space, which no object's name has in practice"))
	}
	if errs := content.IsPathSegmentName(name); len(errs) > 0 {
		// Neither rule: say both, the usual one first.
		return bad(fmt.Sprintf("the name %q", name), append(dnsErrs, "nor is it a path segment name (RBAC's kinds): it "+strings.Join(errs, ", ")))
	}
	return nil
}
