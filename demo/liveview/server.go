package liveview

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
	"github.com/informer-anatomy/informer-anatomy/liveprobe"
)

// EventWindow is how many recent events the data endpoint lists.
const EventWindow = 200

// Pipeline is what the page draws, from the informer's own state.
type Pipeline struct {
	Informer  string                   `json:"informer"`
	Source    string                   `json:"source"` // where the objects come from
	Reflector liveprobe.ReflectorState `json:"reflector"`
	Queue     QueueState               `json:"queue"`
	// HandleDeltas is how many changes HandleDeltas applied and distributed.
	HandleDeltas uint64 `json:"handleDeltas"`
	Indexer      int    `json:"indexer"` // objects cached
	// Holdings: the estimate of the bytes the cached objects hold (and
	// before the transform), and the reflector's last relist, as
	// dropin.LiveViewHandler shows them (one code: liveprobe.Holdings).
	livepage.Holdings
	Listeners []ListenerState `json:"listeners"`
}

// QueueState is the queue box.
type QueueState struct {
	Kind  string `json:"kind"` // realfifo or deltafifo
	Depth int    `json:"depth"`
}

// ListenerState is one listener's row: addCh → pending → nextCh → handler.
type ListenerState struct {
	Name       string  `json:"name"`
	AddCh      int     `json:"addCh"`
	Pending    int     `json:"pending"`
	Calls      uint64  `json:"calls"`
	MeanMicros float64 `json:"meanMicros"`
	MaxMicros  float64 `json:"maxMicros"`
	// Workqueue, set when this listener's handler feeds a traced workqueue
	// (the demo's controller), extends the row: the queue and the
	// reconciles its worker made.
	Workqueue *WorkqueueState `json:"workqueue,omitempty"`
}

// WorkqueueState is a controller's workqueue after its handler: keys
// waiting, adds merged into a waiting key, reconciles done, and the last
// reconcile's time.
type WorkqueueState struct {
	Name       string  `json:"name"`
	Depth      int     `json:"depth"`
	Adds       uint64  `json:"adds"`
	Merged     uint64  `json:"merged"`
	Reconciles uint64  `json:"reconciles"`
	LastMicros float64 `json:"lastMicros"`
}

// State is the data endpoint's answer.
type State struct {
	Pipeline Pipeline `json:"pipeline"`
	Events   []Event  `json:"events"`
	// TracesKept and TracesEvicted: the span store's bound at work.
	TracesKept    int `json:"tracesKept"`
	TracesEvicted int `json:"tracesEvicted"`
	// LateSpansDropped: spans that ended in a trace already evicted, and
	// were dropped so as not to push out a newer one.
	LateSpansDropped int `json:"lateSpansDropped"`
	// SpansDropped is how many spans never reached the exporter because
	// its queue was full: tracing drops them rather than wait (and slow
	// the informer). The page and its waterfalls still hold them.
	SpansDropped int64 `json:"spansDropped"`
	// TraceparentsIgnored is how many tracing.k8s.io/traceparent
	// annotations the process's informers ignored because they did not
	// parse (internal/tracing.TraceparentsIgnored): no link was made for
	// them, and no error either.
	TraceparentsIgnored uint64 `json:"traceparentsIgnored"`
}

// Control is one button of the page (embedded server only).
type Control struct {
	Name  string `json:"name"`  // the URL path element: POST /api/control/<name>
	Label string `json:"label"` // the button's text
	// LookFor says in one line what to watch after pressing it.
	LookFor string `json:"lookFor"`
	// Param, if set, names the one number the control takes (?n=).
	Param string `json:"param,omitempty"`
	// Max is the largest ?n= the control accepts (with Param); the server
	// refuses anything else before Do runs.
	Max int `json:"max,omitempty"`
	// Do runs the control; its message is shown beside LookFor. An error
	// made by [Busy] is answered 503, one made by [Invalid] 400, one made
	// by [Conflict] 409, a cancelled ctx (the demo is stopping) 503; any
	// other 500.
	Do func(ctx context.Context, n int) (string, error) `json:"-"`
}

// controlError is an error with the HTTP status the server answers it with.
type controlError struct {
	code int
	msg  string
}

func (e *controlError) Error() string { return e.msg }

// Busy is a control's error for "not now": another control runs, or what
// it would add could not be shown honestly until the informer catches up.
// The server answers it 503 Service Unavailable: the request was fine and
// may succeed later.
func Busy(format string, args ...any) error {
	return &controlError{http.StatusServiceUnavailable, fmt.Sprintf(format, args...)}
}

// Invalid is a control's error for a request that can never succeed as
// given (a burst larger than a slow handler can drain): 400 Bad Request.
func Invalid(format string, args ...any) error {
	return &controlError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// Conflict is a control's error for a request the page's state does not
// allow now, and that the reader can fix (nothing left to delete, no
// added handler to remove, the most handlers already added): 409
// Conflict. A user's mistake is not the server's failure (500).
func Conflict(format string, args ...any) error {
	return &controlError{http.StatusConflict, fmt.Sprintf(format, args...)}
}

// Options configure a [Server].
type Options struct {
	// Pipeline reads the informer's counters; called on every poll.
	Pipeline func() Pipeline
	// Spans is the store the event list and waterfalls read.
	Spans *SpanStore
	// Controls returns the page's buttons (they may be attached after the
	// server starts) and, when there are none, why.
	Controls func() (controls []Control, none string)
	// SpansDropped, if set, counts the spans the exporter's queue dropped.
	SpansDropped func() int64
}

// Server serves the page, its assets and its endpoints.
type Server struct {
	o       Options
	handler http.Handler
}

// NewServer returns the page's handler. A state-changing request (POST)
// from another origin, as a browser marks it (Sec-Fetch-Site, or an
// Origin that is not the Host), is refused with 403: otherwise any web
// page open in another tab could press the controls (a "simple" POST
// needs no CORS preflight). Requests with neither header are not from a
// browser page (the workshop kit, curl) and pass. Which Host a request
// may name is checked by [Serve], which knows the address it serves.
func NewServer(o Options) *Server {
	s := &Server{o: o}
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServerFS(livepage.Assets()))
	mux.HandleFunc("GET /api/state", s.state)
	mux.HandleFunc("GET /api/controls", s.controls)
	mux.HandleFunc("POST /api/control/{name}", s.control)
	mux.HandleFunc("GET /api/trace/{id}", s.trace)
	csrf := http.NewCrossOriginProtection()
	csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		from := r.Header.Get("Origin")
		if from == "" {
			from = "a page of another site (Sec-Fetch-Site: " + r.Header.Get("Sec-Fetch-Site") + ")"
		}
		writeJSON(w, http.StatusForbidden, ControlResult{Message: fmt.Sprintf(
			"refused: a cross-origin request from %s; the live view's controls answer only its own page: open it at its own address to press them", from)})
	}))
	inner := csrf.Handler(mux)
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		livepage.SetSecurityHeaders(w.Header())
		inner.ServeHTTP(w, r)
	})
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// writeJSON is the page's JSON answer (one code with dropin's).
func writeJSON(w http.ResponseWriter, code int, v any) { livepage.WriteJSON(w, code, v) }

func (s *Server) state(w http.ResponseWriter, _ *http.Request) {
	st := State{Pipeline: s.o.Pipeline(), Events: s.o.Spans.Events(EventWindow)}
	st.TracesKept, st.TracesEvicted = s.o.Spans.Counts()
	st.LateSpansDropped = s.o.Spans.LateSpansDropped()
	st.TraceparentsIgnored = tracing.TraceparentsIgnored()
	if s.o.SpansDropped != nil {
		st.SpansDropped = s.o.SpansDropped()
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) controls(w http.ResponseWriter, _ *http.Request) {
	cs, none := s.o.Controls()
	writeJSON(w, http.StatusOK, map[string]any{"controls": cs, "none": none})
}

// ControlResult is a control's answer.
type ControlResult struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
	LookFor string `json:"lookFor"`
}

// controlWriteTimeout bounds the answer to one control: a burst is
// written before it answers, longer than the server's WriteTimeout allows
// any other answer.
const controlWriteTimeout = 5 * time.Minute

func (s *Server) control(w http.ResponseWriter, r *http.Request) {
	cs, none := s.o.Controls()
	i := slices.IndexFunc(cs, func(c Control) bool { return c.Name == r.PathValue("name") })
	if i < 0 {
		msg := fmt.Sprintf("no control %q", r.PathValue("name"))
		if none != "" {
			msg += ": " + none
		}
		writeJSON(w, http.StatusNotFound, ControlResult{Message: msg})
		return
	}
	c := cs[i]
	n, err := controlParam(c, r.URL.Query())
	if err != nil {
		writeJSON(w, http.StatusBadRequest, ControlResult{Message: err.Error(), LookFor: c.LookFor})
		return
	}
	// A failure to extend the deadline leaves the server's: the answer may
	// then be cut, the control still runs.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(controlWriteTimeout))
	msg, err := c.Do(r.Context(), n)
	if err != nil {
		code := http.StatusInternalServerError
		var ce *controlError
		switch {
		case errors.As(err, &ce):
			code = ce.code
		case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
			code = http.StatusServiceUnavailable
		}
		writeJSON(w, code, ControlResult{Message: err.Error(), LookFor: c.LookFor})
		return
	}
	writeJSON(w, http.StatusOK, ControlResult{OK: true, Message: msg, LookFor: c.LookFor})
}

// controlParam reads the control's ?n=: a plain decimal number from 1 to
// c.Max, nothing else ("10abc", "1e3", "-5", "+5", " 5" and a number past
// the int range are refused, not read up to where they stop making
// sense); a control without Param takes none.
func controlParam(c Control, q url.Values) (int, error) {
	raw, given := q["n"]
	if c.Param == "" {
		if given {
			return 0, fmt.Errorf("%s takes no ?n=", c.Name)
		}
		return 0, nil
	}
	want := fmt.Sprintf("%s wants ?n= a whole number from 1 to %d (%s)", c.Name, c.Max, c.Param)
	if len(raw) != 1 {
		return 0, fmt.Errorf("%s; got %d values", want, len(raw))
	}
	v := raw[0]
	if v == "" || strings.Trim(v, "0123456789") != "" {
		return 0, fmt.Errorf("%s; got %q: digits only", want, v)
	}
	n, err := strconv.Atoi(v) // digits only: its one possible error is the range
	if err != nil || n > c.Max {
		return 0, fmt.Errorf("%s; got %s: more than %d", want, v, c.Max)
	}
	if n < 1 {
		return 0, fmt.Errorf("%s; got %s", want, v)
	}
	return n, nil
}

// WaterfallSpan, Link and Waterfall are the page's (internal/livepage).
type (
	WaterfallSpan = livepage.WaterfallSpan
	Link          = livepage.Link
	Waterfall     = livepage.Waterfall
)

func (s *Server) trace(w http.ResponseWriter, r *http.Request) {
	id, err := trace.TraceIDFromHex(r.PathValue("id"))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "not a trace ID: " + err.Error()})
		return
	}
	wf, ok := s.o.Spans.Waterfall(id)
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "trace not kept (evicted, or never recorded): the page keeps the last traces only"})
		return
	}
	writeJSON(w, http.StatusOK, wf)
}

// Listen binds addr. It returns the listener, the page's URL and, when addr
// is not a loopback address, a warning to print: the page's controls write
// to the API server, and anyone who can reach the port can press them. A
// port already taken gets an error that names a way out.
func Listen(addr string) (ln net.Listener, url, warning string, err error) {
	l, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		host, _, _ := net.SplitHostPort(addr)
		if host == "" {
			host = "127.0.0.1"
		}
		return nil, "", "", fmt.Errorf("--ui-addr %s: the port is taken (another trace-demo --ui, or another program, listens there): give another, or --ui-addr %s to let the system pick a free one (the demo prints the URL)",
			addr, net.JoinHostPort(host, "0"))
	}
	if err != nil {
		return nil, "", "", fmt.Errorf("--ui-addr %s: %w", addr, err)
	}
	host, _, _ := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		warning = fmt.Sprintf("the live view listens on %s, not on loopback: anyone who can reach this port sees the page and can press its controls", l.Addr())
	}
	// The name the user gave is one the page may be opened by.
	if ip == nil && host != "" {
		l = &namedListener{Listener: l, name: host}
	}
	return l, "http://" + l.Addr().String() + "/", warning, nil
}

// namedListener remembers the host name --ui-addr gave, for the Host check.
type namedListener struct {
	net.Listener
	name string
}

// newHostPolicy is the page's Host policy (internal/livepage, one code
// with dropin's) for the address ln serves, and the name --ui-addr gave.
func newHostPolicy(ln net.Listener) livepage.HostPolicy {
	name := ""
	if nl, ok := ln.(*namedListener); ok {
		name = nl.name
	}
	return livepage.NewHostPolicy(ln.Addr(), name)
}

// timeouts are the server's; a variable so that a test can shorten them.
var timeouts = struct{ readHeader, read, write, idle time.Duration }{
	readHeader: 5 * time.Second,
	read:       10 * time.Second, // no endpoint takes a body
	// Every answer but a control's (controlWriteTimeout) is written within
	// moments; a reader that stalls longer is let go.
	write: 30 * time.Second,
	// The page polls five times a second: a keep-alive connection idle
	// this long belongs to a closed tab, and is closed.
	idle: 30 * time.Second,
}

// Serve serves s on ln until ctx ends. It refuses (403) any request whose
// Host does not name the address it serves, and bounds how long a client
// may take to send a request, to read an answer and to stay idle.
func Serve(ctx context.Context, ln net.Listener, s *Server) error {
	hosts := newHostPolicy(ln)
	guarded := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hosts.Allows(r.Host) {
			livepage.SetSecurityHeaders(w.Header())
			writeJSON(w, http.StatusForbidden, ControlResult{Message: fmt.Sprintf(
				"refused: this live view serves %s, and the request was addressed to %q: open the page by the address the demo printed", ln.Addr(), r.Host)})
			return
		}
		s.ServeHTTP(w, r)
	})
	hs := &http.Server{
		Handler:           guarded,
		ReadHeaderTimeout: timeouts.readHeader,
		ReadTimeout:       timeouts.read,
		WriteTimeout:      timeouts.write,
		IdleTimeout:       timeouts.idle,
		MaxHeaderBytes:    64 << 10,
		// Requests end with the server: a control still running sees its
		// context cancelled.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if hs.Shutdown(sctx) != nil {
			_ = hs.Close()
		}
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
