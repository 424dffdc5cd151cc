package livepage

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// SpanStore is a span processor that keeps the ended spans of the most
// recent traces, for the event list and the waterfalls. When more than
// MaxTraces traces, or more than [SpansPerTrace] spans per kept trace on
// average ([SpanStore.MaxSpans] in all), are kept, the oldest trace (by its
// first ended span) is evicted whole; a trace with more than
// maxSpansPerTrace spans (a long reflector cycle) keeps its first ones. Its
// memory is so bounded however long the run and however many handlers the
// informer has: a trace's spans grow with its listeners (about five
// each), and with the trace count alone 5,000 traces of 60 listeners held
// 1.6 GB.
//
// It keeps the SDK's own read-only snapshots, as the batch processor does,
// and turns them into [spancheck.Span]s only when the page reads them: OnEnd
// runs on the informer's goroutines for every span, and converting there
// (an attribute map per span, about 17 spans an event) made the live view
// a large share of a traced run's CPU (BenchmarkLiveView; the figures are
// in docs/performance.md), while the page reads only some 200 traces'
// roots five times a second and one waterfall per click.
type SpanStore struct {
	maxTraces int
	maxSpans  int

	mu sync.Mutex
	// Guarded by mu:
	traces map[trace.TraceID]*storedTrace
	order  []trace.TraceID // ring of kept trace IDs, oldest at head, n of them
	head   int
	n      int
	spans  int // kept in all
	// evicted counts traces dropped to stay within maxTraces and maxSpans.
	evicted int
}

type storedTrace struct {
	spans []sdktrace.ReadOnlySpan // immutable once ended
	// root is the index in spans of the per-object root, -1 until it ends.
	root int
}

// maxSpansPerTrace bounds one trace: a per-object trace has about five
// spans per listener; a reflector cycle trace gains a span per watch.
const maxSpansPerTrace = 2000

// SpansPerTrace is the average a store keeps per trace: room for every
// trace of an informer with the demo's three handlers (about 17 spans an
// event); with more handlers it keeps fewer, larger traces.
const SpansPerTrace = 25

// NewSpanStore keeps the last maxTraces traces, and at most
// maxTraces*SpansPerTrace spans (or one trace whole, up to
// maxSpansPerTrace).
func NewSpanStore(maxTraces int) *SpanStore {
	maxTraces = max(maxTraces, 1)
	return &SpanStore{maxTraces: maxTraces, maxSpans: maxTraces * SpansPerTrace,
		order: make([]trace.TraceID, maxTraces), traces: map[trace.TraceID]*storedTrace{}}
}

// MaxSpans is the most spans the store keeps (but for one larger trace).
func (s *SpanStore) MaxSpans() int { return s.maxSpans }

// OnStart does nothing: only ended spans are shown, as exported.
func (s *SpanStore) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd keeps sp under its trace.
func (s *SpanStore) OnEnd(sp sdktrace.ReadOnlySpan) {
	id := sp.SpanContext().TraceID()
	root := isEventRoot(sp)
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.traces[id]
	if !ok {
		// Room for a per-object trace with three listeners, so that
		// appending rarely grows the slice.
		t = &storedTrace{root: -1, spans: make([]sdktrace.ReadOnlySpan, 0, 20)}
		s.traces[id] = t
		s.push_locked(id)
	}
	if len(t.spans) >= maxSpansPerTrace {
		return
	}
	if root {
		t.root = len(t.spans)
	}
	t.spans = append(t.spans, sp)
	s.spans++
	for s.spans > s.maxSpans && s.n > 1 {
		s.evictOldest_locked()
	}
}

// push_locked appends id to the ring, evicting the oldest trace when full.
func (s *SpanStore) push_locked(id trace.TraceID) {
	if s.n == len(s.order) {
		s.evictOldest_locked()
	}
	s.order[(s.head+s.n)%len(s.order)] = id
	s.n++
}

// evictOldest_locked drops the oldest kept trace.
func (s *SpanStore) evictOldest_locked() {
	id := s.order[s.head]
	if t := s.traces[id]; t != nil {
		s.spans -= len(t.spans)
	}
	delete(s.traces, id)
	s.evicted++
	s.head = (s.head + 1) % len(s.order)
	s.n--
}

// Shutdown and ForceFlush have nothing to flush.
func (s *SpanStore) Shutdown(context.Context) error   { return nil }
func (s *SpanStore) ForceFlush(context.Context) error { return nil }

// isEventRoot: a per-object root, "ListAndWatch <source>" or a late
// handler's AddEventHandler.
func isEventRoot(s sdktrace.ReadOnlySpan) bool {
	return !s.Parent().SpanID().IsValid() && (strings.HasPrefix(s.Name(), tracing.SpanRootPrefix) || s.Name() == tracing.SpanAddEventHandle)
}

// isHandlerCall is spancheck.IsHandlerCall on a snapshot.
func isHandlerCall(s sdktrace.ReadOnlySpan) bool {
	return spancheck.IsHandlerCall(&spancheck.Span{Name: s.Name()})
}

// attr is the attribute k of s as spancheck.FromReadOnly renders it, or "".
func attr(s sdktrace.ReadOnlySpan, k attribute.Key) string {
	for _, a := range s.Attributes() {
		if a.Key == k {
			return a.Value.String()
		}
	}
	return ""
}

// Event is one row of the event list: one traced object's trip.
type Event struct {
	TraceID         string    `json:"traceID"`
	Root            string    `json:"root"` // the root span's name
	Type            string    `json:"type"` // informer.event.type (ADDED, ..., TOMBSTONE), or the root's name
	Key             string    `json:"key"`
	ResourceVersion string    `json:"rv"`
	Start           time.Time `json:"start"`
	// HandlerCalls is how many handler call spans have ended so far.
	HandlerCalls int `json:"handlerCalls"`
	// TotalMicros is from the root's start to the end of the last handler
	// call so far; 0 while no handler has returned.
	TotalMicros int64 `json:"totalMicros"`
}

// Events returns the newest n events, newest first.
func (s *SpanStore) Events(n int) []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Event, 0, min(n, s.n))
	for i := s.n - 1; i >= 0 && len(out) < n; i-- {
		id := s.order[(s.head+i)%len(s.order)]
		t := s.traces[id]
		if t == nil || t.root < 0 {
			continue
		}
		r := t.spans[t.root]
		e := Event{TraceID: id.String(), Root: r.Name(), Type: attr(r, tracing.KeyEventType), Key: attr(r, tracing.KeyObjectKey),
			ResourceVersion: attr(r, tracing.KeyResourceVersion), Start: r.StartTime()}
		if e.Type == "" {
			e.Type = r.Name()
		}
		var last time.Time
		for _, sp := range t.spans {
			if isHandlerCall(sp) {
				e.HandlerCalls++
				if sp.EndTime().After(last) {
					last = sp.EndTime()
				}
			}
		}
		if !last.IsZero() {
			e.TotalMicros = last.Sub(r.StartTime()).Microseconds()
		}
		out = append(out, e)
	}
	return out
}

// Counts is how many traces are kept and how many were evicted.
func (s *SpanStore) Counts() (kept, evicted int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.traces), s.evicted
}

// Trace returns a copy of the kept spans of id, sorted by start; ok is
// false when the trace is not (or no longer) kept.
func (s *SpanStore) Trace(id trace.TraceID) (spans []spancheck.Span, ok bool) {
	s.mu.Lock()
	t := s.traces[id]
	var kept []sdktrace.ReadOnlySpan
	if t != nil {
		kept = slices.Clone(t.spans)
	}
	s.mu.Unlock()
	for _, sp := range kept {
		spans = append(spans, spancheck.FromReadOnly(sp))
	}
	slices.SortStableFunc(spans, func(a, b spancheck.Span) int { return a.Start.Compare(b.Start) })
	return spans, t != nil
}

// Span finds one kept span, for a link.
func (s *SpanStore) Span(sc trace.SpanContext) (spancheck.Span, bool) {
	s.mu.Lock()
	var found sdktrace.ReadOnlySpan
	if t := s.traces[sc.TraceID()]; t != nil {
		for _, sp := range t.spans {
			if sp.SpanContext().SpanID() == sc.SpanID() {
				found = sp
				break
			}
		}
	}
	s.mu.Unlock()
	if found == nil {
		return spancheck.Span{}, false
	}
	return spancheck.FromReadOnly(found), true
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
	// AttrText is Attrs as the span's row shows them (attrText below),
	// and Wait marks a span that times a wait, drawn as such
	// (tracing.IsWait: the informer's waits and the workqueue's): the page takes both from here, so that
	// no span name or attribute key is spelled in app.js, where no Go
	// test would see it change (TestAppNamesNoSpan).
	AttrText string `json:"attrText"`
	Wait     bool   `json:"wait,omitempty"`
	Links    []Link `json:"links,omitempty"`
}

// attrText is a span's attributes as its row on the page shows them:
// key=value by key, without informer.name (every span of an informer's
// trace carries the same one) and with the contract's informer. prefix cut
// off (every other key of the per-object path would repeat it).
func attrText(attrs map[attribute.Key]string) string {
	keys := slices.Sorted(maps.Keys(attrs))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if k == tracing.KeyInformerName {
			continue
		}
		parts = append(parts, strings.TrimPrefix(string(k), informerKeyPrefix)+"="+attrs[k])
	}
	return strings.Join(parts, " ")
}

// informerKeyPrefix is the namespace of the contract's informer.* keys.
const informerKeyPrefix = "informer."

// Link is a span link, with the linked span when it is still kept.
type Link struct {
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
	Name    string `json:"name,omitempty"` // "" when the linked span is not kept
	// Writer marks a root's link to the span that wrote its object (the
	// object carried it in tracing.k8s.io/traceparent; the contract's
	// "From one controller to the next"), as opposed to a link to a
	// reflector cycle, a queue entry or deltas popped together.
	Writer bool `json:"writer,omitempty"`
}

// Waterfall is the trace endpoint's answer.
type Waterfall struct {
	TraceID string          `json:"traceID"`
	Spans   []WaterfallSpan `json:"spans"`
}

// Waterfall is the kept trace id as the page draws it; ok is false when
// it is not (or no longer) kept.
func (s *SpanStore) Waterfall(id trace.TraceID) (wf Waterfall, ok bool) {
	spans, ok := s.Trace(id)
	if !ok {
		return Waterfall{}, false
	}
	wf = Waterfall{TraceID: id.String()}
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
		ws.AttrText = attrText(sp.Attrs)
		ws.Wait = tracing.IsWait(sp.Name)
		for _, l := range sp.Links {
			ln := Link{TraceID: l.TraceID().String(), SpanID: l.SpanID().String(),
				Writer: slices.ContainsFunc(sp.WriterLinks, func(w trace.SpanContext) bool { return w.SpanID() == l.SpanID() })}
			if ls, ok := s.Span(l); ok {
				ln.Name = ls.Name
			}
			ws.Links = append(ws.Links, ln)
		}
		wf.Spans = append(wf.Spans, ws)
	}
	return wf, true
}

// Reconcile is one workqueue.process span: a worker's pass over a key.
type Reconcile struct {
	TraceID string    `json:"traceID"`
	Queue   string    `json:"queue"`
	Key     string    `json:"key"`
	Start   time.Time `json:"start"`
	Micros  int64     `json:"micros"`
	// Links is how many links the span has: the adds merged into the
	// wait it served, and the writes behind them, each in its own trace.
	Links int `json:"links"`
}

// Reconciles returns the newest n reconciles (workqueue.process spans)
// of the kept traces, newest first: the page's "why did this run" list,
// each opening its trace (the watch event, the handler and the add
// behind it, and links to the adds it absorbed).
func (s *SpanStore) Reconciles(n int) []Reconcile {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Reconcile
	for i := s.n - 1; i >= 0 && len(out) < n; i-- {
		id := s.order[(s.head+i)%len(s.order)]
		t := s.traces[id]
		if t == nil {
			continue
		}
		for j := len(t.spans) - 1; j >= 0 && len(out) < n; j-- {
			sp := t.spans[j]
			if sp.Name() != tracing.SpanWorkqueueProcess {
				continue
			}
			out = append(out, Reconcile{TraceID: id.String(), Queue: attr(sp, tracing.KeyWorkqueueName), Key: attr(sp, tracing.KeyWorkqueueKey),
				Start: sp.StartTime(), Micros: sp.EndTime().Sub(sp.StartTime()).Microseconds(), Links: len(sp.Links())})
		}
	}
	return out
}
