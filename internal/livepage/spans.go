package livepage

import (
	"container/list"
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
// maxSpansPerTrace spans (a long reflector cycle) keeps its first ones.
//
// An evicted trace stays evicted: the spans of it that end later are
// dropped (and counted, [SpanStore.LateSpansDropped]), not kept as a new,
// rootless trace; and a trace that has no root yet (a fragment: a
// reflector cycle still running, or the late half of a change evicted
// before the store could know it) is evicted before any trace that has
// one, and never pushes one out. Behind a slow handler, the spans of one change end
// minutes after its root (its pop, its handler call, the reconcile it
// queued); while the store counted each such late span as the newest
// trace, the late halves of long-evicted changes pushed out the whole
// recent ones, and after a backlog the page listed a handful of
// reconciles among 2,000 kept fragments. A late span is known as such in
// two ways: its trace is one of the recently evicted ones (remembered,
// bounded), or it is a wait span (the time waited in a queue or a buffer,
// [tracing.IsWait]) of an unknown trace that began waiting no later than
// the newest evicted trace began: its trace is older than one already
// evicted, so by age it goes first. Its
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
	// order holds every kept trace, oldest at the front; fragments those
	// of the kept traces that have no root yet (no span without a parent
	// has ended in them), oldest at the front. A trace is in order iff it
	// is in traces, and in fragments iff it is also rootless.
	order, fragments list.List
	spans            int // kept in all
	// evicted counts traces dropped to stay within maxTraces and maxSpans.
	evicted int
	// evictedIDs remembers the traces evicted most recently, and lateIDs
	// those found late by the horizon, so that their later spans are
	// dropped rather than kept as traces of their own. Two rings, so that
	// a burst of late traces cannot push the newest evicted ones out.
	evictedIDs, lateIDs idRing
	// horizon is the latest first start of an evicted trace: a wait that
	// began before it belongs to a trace older than one already evicted.
	horizon time.Time
	// lateDropped counts the late spans dropped.
	lateDropped int
}

type storedTrace struct {
	id    trace.TraceID
	spans []sdktrace.ReadOnlySpan // immutable once ended
	// root is the index in spans of the per-object root, -1 until it ends.
	root int
	// first is the earliest start among spans: the trace's age.
	first time.Time
	// inOrder is the trace's element of SpanStore.order; inFragments its
	// element of SpanStore.fragments, nil once a span with no parent (a
	// root of any kind) has ended in it.
	inOrder, inFragments *list.Element
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
	return &SpanStore{maxTraces: maxTraces, maxSpans: maxTraces * SpansPerTrace, traces: map[trace.TraceID]*storedTrace{},
		evictedIDs: newIDRing(goneRemembered * maxTraces), lateIDs: newIDRing(goneRemembered * maxTraces)}
}

// goneRemembered is how many evicted trace IDs the store remembers, per
// trace it keeps: the late spans of a trace end within a handler call or a
// reconcile of its eviction, or begin with a wait older than the horizon.
const goneRemembered = 2

// MaxSpans is the most spans the store keeps (but for one larger trace).
func (s *SpanStore) MaxSpans() int { return s.maxSpans }

// OnStart does nothing: only ended spans are shown, as exported.
func (s *SpanStore) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd keeps sp under its trace.
func (s *SpanStore) OnEnd(sp sdktrace.ReadOnlySpan) {
	id := sp.SpanContext().TraceID()
	root := isEventRoot(sp)
	parentless := !sp.Parent().SpanID().IsValid()
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.traces[id]
	if !ok {
		if s.late_locked(id, sp, parentless) {
			s.lateDropped++
			return
		}
		if !s.makeRoom_locked(parentless) {
			s.lateIDs.add(id)
			s.lateDropped++
			return
		}
		// Room for a per-object trace with three listeners, so that
		// appending rarely grows the slice.
		t = &storedTrace{id: id, root: -1, spans: make([]sdktrace.ReadOnlySpan, 0, 20), first: sp.StartTime()}
		s.traces[id] = t
		t.inOrder = s.order.PushBack(t)
		if !parentless {
			t.inFragments = s.fragments.PushBack(t)
		}
	}
	if len(t.spans) >= maxSpansPerTrace {
		return
	}
	if sp.StartTime().Before(t.first) {
		t.first = sp.StartTime()
	}
	if parentless && t.inFragments != nil {
		s.fragments.Remove(t.inFragments)
		t.inFragments = nil
	}
	if root {
		t.root = len(t.spans)
	}
	t.spans = append(t.spans, sp)
	s.spans++
	for s.spans > s.maxSpans && s.order.Len() > 1 {
		s.evict_locked(s.oldest_locked())
	}
}

// makeRoom_locked makes room for one more trace, and says whether it did.
// A full store evicts its oldest fragment (a trace none of whose roots has
// ended), else its oldest trace; but for a new trace that is itself a
// fragment (parentless false: its first span has a parent that ended
// nowhere here) only a fragment: the late half of a change whose root is
// gone must never push out a whole trace.
func (s *SpanStore) makeRoom_locked(parentless bool) bool {
	if s.order.Len() < s.maxTraces {
		return true
	}
	if s.fragments.Len() == 0 && !parentless {
		return false
	}
	s.evict_locked(s.oldest_locked())
	return true
}

// oldest_locked is the trace to evict first: the oldest fragment, else the
// oldest trace.
func (s *SpanStore) oldest_locked() *storedTrace {
	if e := s.fragments.Front(); e != nil {
		return e.Value.(*storedTrace)
	}
	return s.order.Front().Value.(*storedTrace)
}

// late_locked says whether sp, the first span seen of trace id, ends late
// in a trace the store no longer keeps (and remembers id if so).
func (s *SpanStore) late_locked(id trace.TraceID, sp sdktrace.ReadOnlySpan, parentless bool) bool {
	// A root of a trace dropped as a fragment is not late: its first
	// spans ended before it did (a late handler's synthetic add: the
	// listener's pop goroutine can end addCh before AddEventHandler
	// ends), and from it on the trace is whole but for them.
	if s.evictedIDs.has(id) || (!parentless && s.lateIDs.has(id)) {
		return true
	}
	if tracing.IsWait(sp.Name()) && !sp.StartTime().After(s.horizon) {
		s.lateIDs.add(id)
		return true
	}
	return false
}

// idRing is a set of the last len(order) trace IDs added.
type idRing struct {
	set   map[trace.TraceID]struct{}
	order []trace.TraceID
	next  int
}

func newIDRing(n int) idRing {
	return idRing{set: make(map[trace.TraceID]struct{}, n), order: make([]trace.TraceID, n)}
}

func (r *idRing) has(id trace.TraceID) bool { _, ok := r.set[id]; return ok }

// add puts id in the set, forgetting the one added len(order) adds ago.
func (r *idRing) add(id trace.TraceID) {
	if old := r.order[r.next]; old.IsValid() {
		delete(r.set, old)
	}
	r.order[r.next] = id
	r.set[id] = struct{}{}
	r.next = (r.next + 1) % len(r.order)
}

// evict_locked drops t, whole.
func (s *SpanStore) evict_locked(t *storedTrace) {
	s.spans -= len(t.spans)
	if t.first.After(s.horizon) {
		s.horizon = t.first
	}
	s.order.Remove(t.inOrder)
	if t.inFragments != nil {
		s.fragments.Remove(t.inFragments)
	}
	delete(s.traces, t.id)
	s.evictedIDs.add(t.id)
	s.evicted++
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

// attr is the attribute k of s as spancheck.FromReadOnly renders it, or
// "", made safe for the page (tracing.Value): the store keeps every span
// of the tracer provider, a user's own included, whose attributes no one
// here made safe.
func attr(s sdktrace.ReadOnlySpan, k attribute.Key) string {
	for _, a := range s.Attributes() {
		if a.Key == k {
			return tracing.Value(a.Value.String())
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
	out := make([]Event, 0, min(n, s.order.Len()))
	for el := s.order.Back(); el != nil && len(out) < n; el = el.Prev() {
		t := el.Value.(*storedTrace)
		id := t.id
		if t.root < 0 {
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

// LateSpansDropped is how many spans ended in a trace already evicted and
// were dropped, so as not to push out a newer trace (see [SpanStore]).
func (s *SpanStore) LateSpansDropped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lateDropped
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
	// Writer marks a root's link to the span its object's
	// tracing.k8s.io/traceparent annotation names as its writer (the
	// contract's "From one controller to the next"), as opposed to a link
	// to a reflector cycle, a queue entry or deltas popped together. The
	// annotation is unauthenticated: whoever can write the object can name
	// any span there, so the link is a claim, and Note (WriterNote) says
	// so on the page.
	Writer bool   `json:"writer,omitempty"`
	Note   string `json:"note,omitempty"`
}

// WriterNote is what the page says of a writer link: what the link is
// (the object's annotation names the span), not what it would be if the
// annotation were true ("written by"). Anyone who can write an object can
// stamp it with any span's traceparent, one that never wrote it included;
// docs/span-contract.md says what that allows.
const WriterNote = "the object's annotation " + tracing.AnnotationTraceparent +
	" names this span as its writer (unverified: whoever can write the object can name any span)"

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
		// Every text from a span is made safe (tracing.Value): a user's
		// spans share the store, and nothing made their names and values
		// valid and bounded.
		for k, v := range sp.Attrs {
			sp.Attrs[k] = tracing.Value(v)
		}
		ws := WaterfallSpan{SpanID: sp.SpanID.String(), Name: tracing.Value(sp.Name), Kind: sp.Kind.String(),
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
			if ln.Writer {
				ln.Note = WriterNote
			}
			if ls, ok := s.Span(l); ok {
				ln.Name = tracing.Value(ls.Name)
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
	for el := s.order.Back(); el != nil && len(out) < n; el = el.Prev() {
		t := el.Value.(*storedTrace)
		id := t.id
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
