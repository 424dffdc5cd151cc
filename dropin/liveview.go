package dropin

import (
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync/atomic"
	"time"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
	"github.com/informer-anatomy/informer-anatomy/liveprobe"
)

// LiveViewHandler serves the live view of this process: the page at its
// root and its JSON state at api/state, for every informer this package
// built and every traced queue it wrapped that is alive now (they join
// when built and leave when stopped: the informer's Run returned, the
// queue was shut down). Per informer: its resource and type, whether it
// has started and synced, the reflector's last resourceVersion, its
// queue's depth, and each handler by name with its notifications waiting
// (addCh, pending), its calls and their mean and longest time, and
// whether it has synced. Per traced queue, by its name: its depth, its
// retries (AddRateLimited calls), and, tracing on or off, its adds, the
// adds merged into a waiting key, the reconciles, the keys in flight, the
// longest running and the reconcile time, counted from the moment this
// handler is made (a queue keeps no books before something reads them).
//
// The page also plots, over the last five minutes, the numbers of the
// metrics this package reports (informer_queued_items per informer,
// informer_handler_pending_notifications and
// informer_handler_processing_latency_seconds per handler,
// workqueue_depth, workqueue_adds_total as a rate and
// workqueue_work_duration_seconds per traced queue), from api/history
// (?since=<Unix ms> for the points after it). A sample is taken once a
// second from the moment the first handler is made, whether or not a page
// is open, so that a page opened after a burst still shows it (one
// goroutine for the life of the process; nothing runs before a handler is
// made); each series keeps its last 300 points.
//
// Per informer the page also shows an estimate of the bytes its cached
// objects hold, and where a transform is set what they would hold without
// it, kept as a running total as objects come and go, from the first
// handler on (see docs/07-your-controller.md for what the estimate is and
// is not); and its reflector's last relist: why (start, a 410, another
// watch error), when, how long fetching the whole state took, and the
// largest heap sampled meanwhile.
//
// It is the demo's page (cmd/trace-demo --ui), one page and one code,
// drawn without the demo's controls: it is read-only. Every answer to
// anything but GET or HEAD is 405 Method Not Allowed, and nothing it
// serves changes the controller. The one exception is opt-in: with
// [LiveViewTraceOneKey], a POST to api/trace-key narrows the process's
// tracing to one object's key (it changes what is traced, nothing else).
// A cross-origin POST (another site's page in the same browser, as its
// Origin or Sec-Fetch-Site header says) is refused 403 before anything
// else, as the demo's controls refuse it. A request addressed to a Host
// that names neither a loopback name (localhost, 127.x.y.z, [::1]: on any
// port, so that kubectl port-forward to any local port works) nor the
// connection's own address (its IP, or this machine's name off loopback,
// on its port) is refused with 403, as the demo's page refuses it: a site
// that rebinds its DNS name to the controller's address cannot read the
// page. A reverse proxy that rewrites Host to the controller's address
// (httputil.ReverseProxy with SetURL) takes that protection away: keep
// the client's Host (Out.Host = In.Host), or bind the proxy to loopback
// (docs/07-your-controller.md).
//
// The listener is the caller's. Mount it at "/", or on a plain mux under
// a prefix, with or without http.StripPrefix (the page fetches its files
// and state relative to its own address, so any prefix works; the handler
// serves the page at any path ending in "/", and redirects one without
// the slash to the same path with it, never elsewhere):
//
//	mux.Handle("/debug/informers/", dropin.LiveViewHandler())
//
// or on controller-runtime's metrics server:
//
//	Metrics: metricsserver.Options{BindAddress: ":8080",
//		ExtraHandlers: map[string]http.Handler{"/debug/informers/": dropin.LiveViewHandler()}}
//
// Each read of api/state takes a snapshot of counters the informers and
// queues keep anyway (atomic loads and a queue's lock for the time of a
// copy); an open page reads it five times a second, a cost the controller
// does not notice.
//
// In a process that runs testing/synctest tests, a request sees only the
// informers and queues made in the bubble it is served in (none: those
// made outside every bubble), and the plots' sampler starts with the first
// handler made outside a bubble (docs/07-your-controller.md, "Informers
// and queues made in a testing/synctest bubble").
//
// Ours: client-go has no live view.
func LiveViewHandler(opts ...LiveViewOption) http.Handler {
	var cfg liveViewConfig
	for _, o := range opts {
		o(&cfg)
	}
	liveViewOn.Store(true)
	timeAllHandlerCalls() // the page shows each handler's mean and longest call
	startHistorySampler() // the plots show the minutes before a page opened
	static := livepage.Assets()
	files := map[string]bool{}
	entries, _ := fs.ReadDir(static, ".")
	for _, e := range entries {
		files[e.Name()] = true
	}
	serve := func(w http.ResponseWriter, r *http.Request) {
		// Behind http.StripPrefix("/debug/informers/", …) the path has
		// lost its leading slash ("api/state"): the routes below match
		// on "/api/…" whatever was stripped.
		p := r.URL.Path
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		if r.Method == http.MethodPost && strings.HasSuffix(p, "/api/trace-key") {
			serveTraceKey(w, r, cfg)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			livepage.WriteJSON(w, http.StatusMethodNotAllowed, livepage.Refusal{
				Message: r.Method + " refused: the live view of this process is read-only"})
			return
		}
		switch {
		case strings.HasSuffix(p, "/api/state"):
			livepage.WriteJSON(w, http.StatusOK, readState(cfg))
		case strings.HasSuffix(p, "/api/history"):
			serveHistory(w, r)
		case strings.Contains(p, "/api/trace/"):
			serveTrace(w, p[strings.LastIndex(p, "/api/trace/")+len("/api/trace/"):])
		case strings.HasSuffix(p, "/api/controls"):
			livepage.WriteJSON(w, http.StatusOK, map[string]any{"controls": []any{},
				"none": "read-only: the live view of your own process has no controls"})
		case strings.Contains(p, "/api/"):
			livepage.WriteJSON(w, http.StatusNotFound, map[string]string{"error": "not served by the live view of a process: " + p})
		case strings.HasSuffix(p, "/") && strings.HasSuffix(requestedPath(r), "/"):
			http.ServeFileFS(w, r, static, "index.html")
		case files[path.Base(p)]:
			http.ServeFileFS(w, r, static, path.Base(p))
		case strings.HasSuffix(p, "/") || !strings.Contains(path.Base(p), "."):
			// The mount point without its slash (the page's relative URLs
			// need it), as the client asked for it: StripPrefix cut what
			// the page cannot know.
			redirectToSlash(w, r)
		default:
			http.NotFound(w, r)
		}
	}
	// A cross-origin POST (another site's page open in the same browser)
	// is refused before anything else, as the demo's controls refuse it:
	// the only POST, api/trace-key, narrows the process's tracing.
	csrf := http.NewCrossOriginProtection()
	csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		from := r.Header.Get("Origin")
		if from == "" {
			from = "a page of another site (Sec-Fetch-Site: " + r.Header.Get("Sec-Fetch-Site") + ")"
		}
		livepage.WriteJSON(w, http.StatusForbidden, livepage.Refusal{Message: fmt.Sprintf(
			"refused: a cross-origin request from %s; the live view answers only its own page: open it at the controller's own address", from)})
	}))
	inner := csrf.Handler(http.HandlerFunc(serve))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := livepage.ConnPolicy(r); p != nil && !p.Allows(r.Host) {
			local, _ := r.Context().Value(http.LocalAddrContextKey).(fmt.Stringer)
			livepage.Refuse(w, fmt.Sprintf("refused: this live view serves %s, and the request was addressed to %q: open the page by the controller's own address", local, r.Host))
			return
		}
		livepage.SetSecurityHeaders(w.Header())
		inner.ServeHTTP(w, r)
	})
}

// requestedPath is the path as the client asked for it, escaped:
// r.RequestURI's, which http.StripPrefix leaves as it was, or r.URL's for
// a request made by hand.
func requestedPath(r *http.Request) string {
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil && u.Path != "" {
		return u.EscapedPath()
	}
	return r.URL.EscapedPath()
}

// redirectToSlash answers 301 to the requested path with a slash added,
// as a reference relative to it ("./informers/" from /debug/informers),
// so that the browser stays on the page's own path whatever prefix was
// stripped before the handler saw the request; http.Redirect would make it
// absolute from the stripped path. The last segment is escaped again: a
// backslash in it ("/%5Cevilhost") would otherwise make "/\evilhost/",
// which browsers read as "//evilhost/", another host. A segment that is
// no name ("", ".", "..", also escaped) has no page below it: 404.
func redirectToSlash(w http.ResponseWriter, r *http.Request) {
	p := requestedPath(r)
	raw := p[strings.LastIndexByte(p, '/')+1:]
	seg, err := url.PathUnescape(raw)
	if err != nil || seg == "" || seg == "." || seg == ".." {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Location", "./"+url.PathEscape(seg)+"/")
	w.WriteHeader(http.StatusMovedPermanently)
}

// liveViewOn is set by the first LiveViewHandler: from then on each
// informer's reflector probe relays the events of every WATCH it sends,
// which the page counts (a goroutine hop per event; before, only the
// requests are logged, at no cost per event).
var liveViewOn atomic.Bool

// EventWindow and ReconcileWindow are how many recent events and
// reconciles the page lists.
const (
	liveEventWindow     = 200
	liveReconcileWindow = 50
	liveMaxTraces       = 2000
)

// liveStore is the process's span store, made by the first
// LiveViewSpanProcessor.
var liveStore atomic.Pointer[livepage.SpanStore]

// LiveViewSpanProcessor is the span processor that feeds the live view's
// event list, its "why did this run" list of reconciles and its
// waterfalls: give it to the tracer provider your informers and queues
// trace with, beside your exporter:
//
//	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter),
//		sdktrace.WithSpanProcessor(dropin.LiveViewSpanProcessor()))
//
// It keeps the spans of the last 2,000 traces (about 25 spans each on
// average, the oldest trace evicted whole), the demo's store; every call
// returns the same one. Without it the page shows the counters only.
//
// Ours: client-go does not trace.
func LiveViewSpanProcessor() sdktrace.SpanProcessor { return spanStore() }

func spanStore() *livepage.SpanStore {
	if s := liveStore.Load(); s != nil {
		return s
	}
	liveStore.CompareAndSwap(nil, livepage.NewSpanStore(liveMaxTraces))
	return liveStore.Load()
}

func readState(cfg liveViewConfig) livepage.ProcessState {
	st := livepage.ProcessState{Process: readProcess(), Events: []livepage.Event{}, Reconciles: []livepage.Reconcile{},
		TraceKeyControl: cfg.traceOneKey}
	if k := liveTraceKey.Load(); k != nil {
		st.TracedKey = *k
	}
	if s := liveStore.Load(); s != nil {
		st.Spans = true
		st.Events = s.Events(liveEventWindow)
		st.Reconciles = s.Reconciles(liveReconcileWindow)
		st.TracesKept, st.TracesEvicted = s.Counts()
		st.LateSpansDropped = s.LateSpansDropped()
	}
	return st
}

// serveTrace answers one kept trace as a waterfall.
func serveTrace(w http.ResponseWriter, hex string) {
	id, err := trace.TraceIDFromHex(hex)
	if err != nil {
		livepage.WriteJSON(w, http.StatusBadRequest, map[string]string{"error": "not a trace ID: " + err.Error()})
		return
	}
	var wf livepage.Waterfall
	ok := false
	if s := liveStore.Load(); s != nil {
		wf, ok = s.Waterfall(id)
	}
	if !ok {
		livepage.WriteJSON(w, http.StatusNotFound, map[string]string{"error": "trace not kept (evicted, never recorded, or no dropin.LiveViewSpanProcessor on the tracer provider): the page keeps the last traces only"})
		return
	}
	livepage.WriteJSON(w, http.StatusOK, wf)
}

// readProcess is the state of every live informer and traced queue.
func readProcess() livepage.Process {
	infs, queues := live.snapshot()
	now := time.Now()
	out := livepage.Process{Informers: []livepage.ProcessInformer{}, Queues: []livepage.ProcessQueue{},
		TraceparentsIgnored: tracing.TraceparentsIgnored()}
	for _, e := range infs {
		pi := livepage.ProcessInformer{Resource: e.resource, Type: e.typ, Handlers: []livepage.ProcessHandler{}}
		st, err := processor.ReadStats(e.inf.inner)
		if err == nil {
			pi.Started, pi.QueueDepth, pi.HandleDeltas, pi.Cached = st.Started, st.QueueLen, st.Distributed, st.Cached
			pi.QueueKind = st.Queue.String()
			pi.ResourceVersion = st.LastSyncResourceVersion
			for _, l := range st.Listeners {
				pi.Handlers = append(pi.Handlers, livepage.ProcessHandler{
					Name: l.Name, AddCh: l.AddCh, Pending: l.Pending, Calls: l.Calls,
					MeanMicros: micros(l.MeanHandlerTime()), MaxMicros: micros(l.MaxHandlerTime), Synced: l.Synced,
				})
			}
		}
		pi.Synced = e.inf.HasSynced()
		pi.Reflector = reflectorOf(e.probe, now)
		pi.Holdings = liveprobe.Holdings(&e.inf.bytes, e.probe)
		out.Informers = append(out.Informers, pi)
	}
	for _, q := range queues {
		pq := livepage.ProcessQueue{Name: q.name, Kind: q.kind, Depth: q.stats.Depth, Adds: q.stats.Adds,
			Merged: q.stats.Merged, Reconciles: q.stats.Processed, InFlight: q.stats.Processing,
			LastMicros: micros(q.stats.ProcessLast), Retries: q.stats.Retries, LongestMicros: micros(q.stats.Longest)}
		if q.stats.Processed > 0 {
			pq.MeanMicros = micros(q.stats.ProcessTotal / time.Duration(q.stats.Processed))
		}
		out.Queues = append(out.Queues, pq)
	}
	return out
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// reflectorOf is what the probe saw of the reflector's requests.
func reflectorOf(p *liveprobe.ReflectorProbe, now time.Time) livepage.ProcessReflector {
	st := p.State()
	r := livepage.ProcessReflector{Phase: st.Phase, ResourceVersion: st.ResourceVersion, Streams: st.Streams,
		Lists: st.Lists, Watches: st.Watches, Streamed: st.Streamed, Bookmark: st.Bookmark, Fetched: st.Fetched,
		Listed: st.Listed, WatchEvents: st.WatchEvents, WatchErrors: st.WatchErrors, LastError: st.LastError, Unprobed: st.Unprobed,
		Requests: make([]livepage.ProcessRequest, 0, len(st.Requests)), SinceEventMillis: -1, IdleMillis: -1}
	for _, q := range st.Requests {
		r.Requests = append(r.Requests, livepage.ProcessRequest(q))
	}
	lastEvent, idleSince := p.Times()
	if !lastEvent.IsZero() {
		r.SinceEventMillis = now.Sub(lastEvent).Milliseconds()
	}
	if !idleSince.IsZero() {
		r.IdleMillis = now.Sub(idleSince).Milliseconds()
	}
	return r
}
