// Package livepage is the live view's page, the one both of its servers
// serve: trace-demo's (demo/liveview, with the demo's controls,
// its event list and its waterfalls) and the one a user's own controller
// mounts (dropin.LiveViewHandler, read-only, every dropin informer and
// traced queue of the process). One page, one script, one set of rules:
// the files (go:embed), the security headers every answer carries, and
// the Host policy that refuses a request addressed to another name (DNS
// rebinding).
//
// It sits below the chapters (test/layers): it imports none of them,
// so that dropin and the demo's parts can both import it.
//
// Ours: client-go has no live view.
package livepage

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
)

//go:embed assets
var assets embed.FS

// Assets are the page's files: index.html, app.js, app.css, favicon.svg.
func Assets() fs.FS {
	sub, err := fs.Sub(assets, "assets")
	if err != nil { // only if the embed above lost its directory
		panic("livepage: " + err.Error())
	}
	return sub
}

// securityHeaders go on every answer. The page is one origin's own: its
// script, style and icon come from the server itself (so the policy
// allows 'self' and nothing inline), it fetches only its own endpoints,
// and no other site may frame it (a framed page's buttons could be
// clicked through a decoy: clickjacking) or load its answers as a script
// or an image.
var securityHeaders = map[string]string{
	"Content-Security-Policy":      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	"X-Frame-Options":              "DENY",
	"X-Content-Type-Options":       "nosniff",
	"Referrer-Policy":              "no-referrer",
	"Cross-Origin-Resource-Policy": "same-origin",
	"Cross-Origin-Opener-Policy":   "same-origin",
}

// SetSecurityHeaders puts the page's security headers on h.
func SetSecurityHeaders(h http.Header) {
	for k, v := range securityHeaders {
		h.Set(k, v)
	}
}

// WriteJSON answers v as JSON with code, never cached.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// WriteRawJSON answers b, JSON already written, with code, never cached.
func WriteRawJSON(w http.ResponseWriter, code int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// Refusal is the body of a refused request: the demo's control answer
// has the same two fields.
type Refusal struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// Refuse answers 403 with msg, and the security headers.
func Refuse(w http.ResponseWriter, msg string) {
	SetSecurityHeaders(w.Header())
	WriteJSON(w, http.StatusForbidden, Refusal{Message: msg})
}

// HostPolicy says which Host headers name a server: the address it
// serves, by its port, and by the names a browser on this machine (or,
// off loopback, in the room) opens it with; and a loopback name
// (localhost, 127.x.y.z, [::1]) on any port, whatever the server's
// address. A page of another site that rebinds its own DNS name to the
// server's address (DNS rebinding) sends its own name as Host, and is
// refused: without this check it could read /api/state, which names the
// cluster, its objects and the controller's keys. A loopback name is one
// no such page can send (a browser sends the name of the page's own
// origin, and a page served from localhost is not the attacker's): it is
// what a browser sends through `kubectl port-forward pod/x 9999:8080`, an
// SSH tunnel or any other local forward, whose local port is not the
// server's.
type HostPolicy struct {
	Port  string
	AnyIP bool // bound to every address (0.0.0.0, [::]): any IP names it
	IP    net.IP
	// Names are the other names it is opened by on its port (lower case,
	// without a trailing dot); localhost needs none.
	Names map[string]bool
}

// NewHostPolicy is the policy of a server on addr (a *net.TCPAddr; any
// other allows loopback names only), which may also be opened by name (the host name
// it was told to listen on; "" for none).
func NewHostPolicy(addr net.Addr, name string) HostPolicy {
	a, _ := addr.(*net.TCPAddr)
	p := HostPolicy{Names: map[string]bool{}}
	if a == nil {
		return p
	}
	p.Port = strconv.Itoa(a.Port)
	p.IP = a.IP
	p.AnyIP = a.IP.IsUnspecified()
	if name != "" {
		p.Names[strings.ToLower(name)] = true
	}
	if !a.IP.IsLoopback() {
		// Off loopback the room opens it by this machine's name too.
		if h, err := os.Hostname(); err == nil && h != "" {
			p.Names[strings.ToLower(h)] = true
		}
	}
	return p
}

// Allows reports whether a request's Host names this server: a loopback
// name on any port (a local forward to it), or, on the port it serves,
// one of its own addresses or names.
func (p HostPolicy) Allows(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		// No port: the browser's default. "[::1]" has its brackets still.
		host, port = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), "80"
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	ip := net.ParseIP(host)
	if name == "localhost" || (ip != nil && ip.IsLoopback()) {
		return true
	}
	if port != p.Port {
		return false
	}
	if ip != nil {
		return p.AnyIP || ip.Equal(p.IP)
	}
	return p.Names[name]
}

// ConnPolicy is the policy for a request that came on a listener this
// package did not open (a handler mounted on the user's own mux): the
// connection's local address (net/http's LocalAddrContextKey) stands for
// the address served: on its port, that IP (and, off loopback, this
// machine's name) names it; a loopback name does on any port (Allows).
// nil if the
// request carries no local address (not from net/http's server).
func ConnPolicy(r *http.Request) *HostPolicy {
	addr, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if addr == nil {
		return nil
	}
	p := NewHostPolicy(addr, "")
	return &p
}

// ProcessState is /api/state of the live view in a user's process
// (dropin.LiveViewHandler): every dropin informer and traced queue alive
// in it. The page draws it in place of the demo's pipeline when Process
// is set.
type ProcessState struct {
	Process Process `json:"process"`
	// Events, Reconciles and the trace counts come from the process's
	// span store (dropin.LiveViewSpanProcessor), when the user's tracer
	// provider feeds it; empty otherwise.
	Events        []Event     `json:"events"`
	Reconciles    []Reconcile `json:"reconciles"`
	TracesKept    int         `json:"tracesKept"`
	TracesEvicted int         `json:"tracesEvicted"`
	// LateSpansDropped counts the spans that ended in a trace already
	// evicted (SpanStore.LateSpansDropped).
	LateSpansDropped int `json:"lateSpansDropped"`
	// Spans says whether the store has been asked for (a tracer provider
	// was given it): without it the page hides the events and reconciles.
	Spans bool `json:"spans"`
	// TraceKeyControl says whether this handler takes api/trace-key (the
	// process's code opted in: dropin.LiveViewTraceOneKey); the page then
	// shows the form. TracedKey is the one key traced now, "" when the
	// informers trace what they would without the page (whichever handler
	// chose it: a read-only page says so too).
	TraceKeyControl bool   `json:"traceKeyControl"`
	TracedKey       string `json:"tracedKey"`
}

// TraceKeyResult is api/trace-key's answer.
type TraceKeyResult struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
	// Key is the key traced now ("" for none).
	Key string `json:"key"`
}

// Process is what the page draws of a user's process.
type Process struct {
	Informers []ProcessInformer `json:"informers"`
	Queues    []ProcessQueue    `json:"queues"`
	// TraceparentsIgnored counts the tracing.k8s.io/traceparent
	// annotations the process's informers ignored (they did not parse).
	TraceparentsIgnored uint64 `json:"traceparentsIgnored"`
}

// ProcessInformer is one informer of the process.
type ProcessInformer struct {
	// Resource is the resource its factory named ("" when the informer
	// was built by hand); Type the example object's Go type.
	Resource string `json:"resource"`
	Type     string `json:"type"`
	Started  bool   `json:"started"`
	Synced   bool   `json:"synced"`
	// ResourceVersion is the reflector's last synced one.
	ResourceVersion string `json:"rv"`
	// QueueKind is realfifo or deltafifo; QueueDepth its length.
	QueueKind  string `json:"queueKind"`
	QueueDepth int    `json:"queueDepth"`
	// HandleDeltas is how many changes were applied and distributed;
	// Cached how many objects the indexer holds.
	HandleDeltas uint64 `json:"handleDeltas"`
	Cached       int    `json:"cached"`
	// Holdings: the bytes the cached objects hold, and the last relist.
	Holdings
	Handlers []ProcessHandler `json:"handlers"`
	// Reflector is the reflector's conversation with the API server, as
	// the demo's reflector box shows it (the same JSON names, drawn by the
	// same script).
	Reflector ProcessReflector `json:"reflector"`
}

// Holdings is what an informer holds beyond its count, as both live
// views send it (liveprobe.Holdings fills it; the page's heldLine draws
// it): in dropin's ProcessInformer and in the demo's pipeline, with the
// same JSON names.
type Holdings struct {
	// CachedBytes estimates the bytes the cached objects hold
	// (liveprobe's ObjectSize, a running total kept as objects come and
	// go; -1 before it counts). BytesBeforeTransform, where a transform
	// is set, is what they would hold without it (CachedBytes scaled by
	// what the transform kept of the objects it was given); -1 otherwise.
	CachedBytes          int64 `json:"cachedBytes"`
	BytesBeforeTransform int64 `json:"bytesBeforeTransform"`
	// LastRelist is the reflector's last fetch of the whole state; nil
	// before the first.
	LastRelist *ProcessRelist `json:"lastRelist,omitempty"`
}

// ProcessRelist is liveprobe's Relist as the page draws it.
type ProcessRelist struct {
	// Reason: "start", "410 Expired" (or Gone), or "watch error: …".
	Reason string `json:"reason"`
	// StartedMillis is when it began (Unix milliseconds); DurationMillis
	// how long it took, -1 while it runs (or its end was not seen).
	StartedMillis  int64 `json:"startedMillis"`
	DurationMillis int64 `json:"durationMillis"`
	Objects        int   `json:"objects"`
	// EndUnseen: its stream began before the live view existed, and its
	// end cannot be seen (DurationMillis stays -1).
	EndUnseen bool `json:"endUnseen,omitempty"`
	// PeakHeap is the largest heap sampled while it ran (bytes; 0: no
	// sample fell within it).
	PeakHeap uint64 `json:"peakHeap,omitempty"`
}

// ProcessReflector is what liveprobe saw of a reflector's
// requests (its ReflectorState, with the same JSON names), and two times.
type ProcessReflector struct {
	// Phase is STREAM, LIST, WATCH or idle (between requests: after a
	// failure, the reflector's backoff).
	Phase           string `json:"phase"`
	ResourceVersion string `json:"rv"`
	Streams         int    `json:"streams"`
	Lists           int    `json:"lists"`
	Watches         int    `json:"watches"`
	Streamed        int    `json:"streamed"`
	Bookmark        string `json:"bookmark,omitempty"`
	Fetched         string `json:"fetched,omitempty"`
	Listed          int    `json:"listed"`
	WatchEvents     int    `json:"watchEvents"`
	WatchErrors     int    `json:"watchErrors"`
	LastError       string `json:"lastError,omitempty"`
	// Unprobed: the open WATCH was sent before the live view existed,
	// so its events are not counted (the next WATCH's will be).
	Unprobed bool `json:"unprobed,omitempty"`
	// Requests are the last requests, oldest first, each with its
	// outcome: a refused stream ("422 Invalid") then a LIST is the
	// fallback and its reason; a watch ended by "ERROR Expired" then a new
	// STREAM a relist and its cause.
	Requests []ProcessRequest `json:"requests"`
	// SinceEventMillis is the time since the last watch event, -1 before
	// the first; IdleMillis how long the reflector has been between
	// requests (-1 when it is not), its backoff after a failure.
	SinceEventMillis int64 `json:"sinceEventMillis"`
	IdleMillis       int64 `json:"idleMillis"`
}

// ProcessRequest is one request of a reflector.
type ProcessRequest struct {
	Verb            string `json:"verb"`
	ResourceVersion string `json:"rv"`
	Objects         int    `json:"objects"`
	Bookmark        string `json:"bookmark,omitempty"`
	Outcome         string `json:"outcome,omitempty"`
}

// ProcessHandler is one handler (listener) of an informer, by name.
type ProcessHandler struct {
	Name       string  `json:"name"`
	AddCh      int     `json:"addCh"`
	Pending    int     `json:"pending"`
	Calls      uint64  `json:"calls"`
	MeanMicros float64 `json:"meanMicros"`
	MaxMicros  float64 `json:"maxMicros"`
	Synced     bool    `json:"synced"`
}

// ProcessQueue is one traced workqueue of the process, by its name.
type ProcessQueue struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"` // rate-limiting, delaying, plain, priority
	Depth int    `json:"depth"`
	// Adds, Merged (adds absorbed by a key already waiting), Reconciles
	// (Get-to-Done passes), InFlight (keys being processed now) and the
	// reconcile latency are counted, tracing on or off, from the moment
	// something reads them (the queue keeps no books before).
	Adds       uint64  `json:"adds"`
	Merged     uint64  `json:"merged"`
	Reconciles uint64  `json:"reconciles"`
	InFlight   int     `json:"inFlight"`
	MeanMicros float64 `json:"meanMicros"`
	LastMicros float64 `json:"lastMicros"`
	// Retries counts AddRateLimited calls (always; 0 on a queue without
	// them); LongestMicros is how long the key processing longest now has
	// been at it, computed at the read.
	Retries       uint64  `json:"retries"`
	LongestMicros float64 `json:"longestMicros"`
}
