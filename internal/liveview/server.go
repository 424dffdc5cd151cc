package liveview

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"slices"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
)

//go:embed assets
var assets embed.FS

// EventWindow is how many recent events the data endpoint lists.
const EventWindow = 200

// Pipeline is what the page draws, from the informer's own state.
type Pipeline struct {
	Informer  string         `json:"informer"`
	Source    string         `json:"source"` // where the objects come from
	Reflector ReflectorState `json:"reflector"`
	Queue     QueueState     `json:"queue"`
	// HandleDeltas is how many changes HandleDeltas applied and distributed.
	HandleDeltas uint64          `json:"handleDeltas"`
	Indexer      int             `json:"indexer"` // objects cached
	Listeners    []ListenerState `json:"listeners"`
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
}

// State is the data endpoint's answer.
type State struct {
	Pipeline Pipeline `json:"pipeline"`
	Events   []Event  `json:"events"`
	// TracesKept and TracesEvicted: the span store's bound at work.
	TracesKept    int `json:"tracesKept"`
	TracesEvicted int `json:"tracesEvicted"`
}

// Control is one button of the page (embedded server only).
type Control struct {
	Name  string `json:"name"`  // the URL path element: POST /api/control/<name>
	Label string `json:"label"` // the button's text
	// LookFor says in one line what to watch after pressing it.
	LookFor string `json:"lookFor"`
	// Param, if set, names the one number the control takes (?n=).
	Param string `json:"param,omitempty"`
	// Do runs the control; its message is shown beside LookFor.
	Do func(ctx context.Context, n int) (string, error) `json:"-"`
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
}

// Server serves the page, its assets and its endpoints.
type Server struct {
	o   Options
	mux *http.ServeMux
}

// NewServer returns the page's handler.
func NewServer(o Options) *Server {
	s := &Server{o: o, mux: http.NewServeMux()}
	static, _ := fs.Sub(assets, "assets")
	s.mux.Handle("GET /", http.FileServerFS(static))
	s.mux.HandleFunc("GET /api/state", s.state)
	s.mux.HandleFunc("GET /api/controls", s.controls)
	s.mux.HandleFunc("POST /api/control/{name}", s.control)
	s.mux.HandleFunc("GET /api/trace/{id}", s.trace)
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) state(w http.ResponseWriter, _ *http.Request) {
	st := State{Pipeline: s.o.Pipeline(), Events: s.o.Spans.Events(EventWindow)}
	st.TracesKept, st.TracesEvicted = s.o.Spans.Counts()
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
	n := 0
	if c.Param != "" {
		if _, err := fmt.Sscan(r.URL.Query().Get("n"), &n); err != nil || n < 1 || n > 100_000 {
			writeJSON(w, http.StatusBadRequest, ControlResult{Message: fmt.Sprintf("%s wants ?n= between 1 and 100000", c.Name), LookFor: c.LookFor})
			return
		}
	}
	msg, err := c.Do(r.Context(), n)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, ControlResult{Message: err.Error(), LookFor: c.LookFor})
		return
	}
	writeJSON(w, http.StatusOK, ControlResult{OK: true, Message: msg, LookFor: c.LookFor})
}

// WaterfallSpan is one span of a waterfall, as exported.
type WaterfallSpan struct {
	SpanID       string            `json:"spanID"`
	ParentID     string            `json:"parentID,omitempty"`
	Name         string            `json:"name"`
	Kind         string            `json:"kind"`
	OffsetMicros int64             `json:"offsetMicros"` // from the trace's first start
	Micros       int64             `json:"micros"`
	Attrs        map[string]string `json:"attrs"`
	Links        []Link            `json:"links,omitempty"`
}

// Link is a span link, with the linked span when it is still kept.
type Link struct {
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
	Name    string `json:"name,omitempty"` // "" when the linked span is not kept
}

// Waterfall is the trace endpoint's answer.
type Waterfall struct {
	TraceID string          `json:"traceID"`
	Spans   []WaterfallSpan `json:"spans"`
}

func (s *Server) trace(w http.ResponseWriter, r *http.Request) {
	id, err := trace.TraceIDFromHex(r.PathValue("id"))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "not a trace ID: " + err.Error()})
		return
	}
	spans, ok := s.o.Spans.Trace(id)
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "trace not kept (evicted, or never recorded): the page keeps the last traces only"})
		return
	}
	writeJSON(w, http.StatusOK, s.waterfall(id, spans))
}

func (s *Server) waterfall(id trace.TraceID, spans []spancheck.Span) Waterfall {
	wf := Waterfall{TraceID: id.String()}
	var t0 time.Time
	if len(spans) > 0 {
		t0 = spans[0].Start
	}
	for _, sp := range spans {
		ws := WaterfallSpan{SpanID: sp.SpanID.String(), Name: sp.Name, Kind: sp.Kind.String(),
			OffsetMicros: sp.Start.Sub(t0).Microseconds(), Micros: sp.Duration().Microseconds(), Attrs: map[string]string{}}
		if sp.ParentID.IsValid() {
			ws.ParentID = sp.ParentID.String()
		}
		for k, v := range sp.Attrs {
			ws.Attrs[string(k)] = v
		}
		for _, l := range sp.Links {
			ln := Link{TraceID: l.TraceID().String(), SpanID: l.SpanID().String()}
			if ls, ok := s.o.Spans.span(l); ok {
				ln.Name = ls.Name
			}
			ws.Links = append(ws.Links, ln)
		}
		wf.Spans = append(wf.Spans, ws)
	}
	return wf
}

// Listen binds addr. It returns the listener, the page's URL and, when addr
// is not a loopback address, a warning to print: the page's controls write
// to the API server, and anyone who can reach the port can press them.
func Listen(addr string) (ln net.Listener, url, warning string, err error) {
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		return nil, "", "", fmt.Errorf("--ui-addr %s: %w", addr, err)
	}
	host, _, _ := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		warning = fmt.Sprintf("the live view listens on %s, not on loopback: anyone who can reach this port sees the page and can press its controls", ln.Addr())
	}
	return ln, "http://" + ln.Addr().String() + "/", warning, nil
}

// Serve serves s on ln until ctx ends.
func Serve(ctx context.Context, ln net.Listener, s *Server) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
