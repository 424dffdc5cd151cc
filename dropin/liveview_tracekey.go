package dropin

import (
	"fmt"
	"net/http"
	"sync/atomic"

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
// key), which restores what was traced before. The key is the process's,
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
// (253) and a slash.
const maxTraceKey = 512

// serveTraceKey sets or clears the traced key: POST api/trace-key with
// key= (query or form); an empty key clears it. Refused 403 when the
// process did not opt in. The Host and cross-origin checks ran before.
func serveTraceKey(w http.ResponseWriter, r *http.Request, cfg liveViewConfig) {
	if !cfg.traceOneKey {
		livepage.WriteJSON(w, http.StatusForbidden, livepage.TraceKeyResult{Message: "refused: this live view is read-only; " +
			"tracing one key from the page is on only where the process's code passes dropin.LiveViewTraceOneKey() to dropin.LiveViewHandler"})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4*maxTraceKey)
	key := r.FormValue("key")
	if len(key) > maxTraceKey {
		livepage.WriteJSON(w, http.StatusBadRequest, livepage.TraceKeyResult{Message: fmt.Sprintf("refused: a key of %d bytes; an object key is at most %d", len(key), maxTraceKey)})
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
