package spancheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// Span is one ended span, reduced to what the contract speaks of.
type Span struct {
	Name     string
	TraceID  trace.TraceID
	SpanID   trace.SpanID
	ParentID trace.SpanID // invalid for a root
	Kind     trace.SpanKind
	Start    time.Time
	End      time.Time
	Attrs    map[attribute.Key]string
	Links    []trace.SpanContext
	// WriterLinks are the links among Links that name the writer of the
	// root's object (link attribute informer.link.annotation): the
	// contract's "From one controller to the next".
	WriterLinks []trace.SpanContext
}

// isWriterLink reports whether a link's attributes mark it as a writer's.
func isWriterLink(key attribute.Key, value string) bool {
	return key == tracing.KeyLinkAnnotation && value == tracing.AnnotationTraceparent
}

// Duration is End - Start.
func (s Span) Duration() time.Duration { return s.End.Sub(s.Start) }

// Attr returns the attribute k, or "".
func (s Span) Attr(k attribute.Key) string { return s.Attrs[k] }

// IsRoot reports whether the span has no parent.
func (s Span) IsRoot() bool { return !s.ParentID.IsValid() }

// FromReadOnly converts a span of the SDK.
func FromReadOnly(r sdktrace.ReadOnlySpan) Span {
	s := Span{
		Name: r.Name(), TraceID: r.SpanContext().TraceID(), SpanID: r.SpanContext().SpanID(),
		ParentID: r.Parent().SpanID(), Kind: r.SpanKind(), Start: r.StartTime(), End: r.EndTime(),
		Attrs: make(map[attribute.Key]string, len(r.Attributes())),
	}
	for _, a := range r.Attributes() {
		s.Attrs[a.Key] = a.Value.String()
	}
	for _, l := range r.Links() {
		s.Links = append(s.Links, l.SpanContext)
		for _, a := range l.Attributes {
			if isWriterLink(a.Key, a.Value.String()) {
				s.WriterLinks = append(s.WriterLinks, l.SpanContext)
			}
		}
	}
	return s
}

// stub is the part of the stdouttrace exporter's JSON (a
// tracetest.SpanStub per span) that Span needs.
type stub struct {
	Name        string
	SpanContext struct{ TraceID, SpanID string }
	Parent      struct{ SpanID string }
	SpanKind    trace.SpanKind
	StartTime   time.Time
	EndTime     time.Time
	Attributes  []struct {
		Key   attribute.Key
		Value struct{ Value any }
	}
	Links []struct {
		SpanContext struct{ TraceID, SpanID string }
		Attributes  []struct {
			Key   attribute.Key
			Value struct{ Value any }
		}
	}
}

// ReadStdoutTrace reads the spans the stdouttrace exporter wrote to r (one
// JSON object per span, indented or not).
func ReadStdoutTrace(r io.Reader) ([]Span, error) {
	dec := json.NewDecoder(r)
	var out []Span
	for {
		var st stub
		err := dec.Decode(&st)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("span %d of the stdouttrace output: %w", len(out)+1, err)
		}
		s := Span{Name: st.Name, Kind: st.SpanKind, Start: st.StartTime, End: st.EndTime,
			Attrs: make(map[attribute.Key]string, len(st.Attributes))}
		if s.TraceID, err = trace.TraceIDFromHex(st.SpanContext.TraceID); err != nil {
			return out, fmt.Errorf("span %q: trace ID: %w", st.Name, err)
		}
		if s.SpanID, err = trace.SpanIDFromHex(st.SpanContext.SpanID); err != nil {
			return out, fmt.Errorf("span %q: span ID: %w", st.Name, err)
		}
		// An absent parent is written as sixteen zeros, which SpanIDFromHex
		// rejects: leave ParentID invalid then.
		s.ParentID, _ = trace.SpanIDFromHex(st.Parent.SpanID)
		for _, a := range st.Attributes {
			s.Attrs[a.Key] = fmt.Sprint(a.Value.Value)
		}
		for _, l := range st.Links {
			tid, _ := trace.TraceIDFromHex(l.SpanContext.TraceID)
			sid, _ := trace.SpanIDFromHex(l.SpanContext.SpanID)
			sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid})
			s.Links = append(s.Links, sc)
			for _, a := range l.Attributes {
				if isWriterLink(a.Key, fmt.Sprint(a.Value.Value)) {
					s.WriterLinks = append(s.WriterLinks, sc)
				}
			}
		}
		out = append(out, s)
	}
}

// Index finds spans by ID and children by parent.
type Index struct {
	ByID     map[trace.SpanID]*Span
	Children map[trace.SpanID][]*Span // sorted by start time
	Roots    []*Span                  // sorted by start time
}

// NewIndex indexes spans.
func NewIndex(spans []Span) *Index {
	ix := &Index{ByID: make(map[trace.SpanID]*Span, len(spans)), Children: map[trace.SpanID][]*Span{}}
	for i := range spans {
		s := &spans[i]
		ix.ByID[s.SpanID] = s
		if s.IsRoot() {
			ix.Roots = append(ix.Roots, s)
		} else {
			ix.Children[s.ParentID] = append(ix.Children[s.ParentID], s)
		}
	}
	byStart := func(a, b *Span) int { return a.Start.Compare(b.Start) }
	slices.SortFunc(ix.Roots, byStart)
	for _, c := range ix.Children {
		slices.SortFunc(c, byStart)
	}
	return ix
}

// Chain is the path from one handler call up to its trace's root: Spans[0]
// is the On* span, the last one the root. Complete reports whether a root
// was reached (false: a span is missing from the export).
//
// A chain can also end by drop (Dropped): a delta still queued when the
// informer stopped never reaches a handler, and the contract ends its trace
// with a *.queued span carrying informer.queue.dropped=true. Such a chain
// is Spans = [queued, root]; see DroppedChains.
type Chain struct {
	Spans    []*Span
	Complete bool
	Dropped  bool
}

// Key is the handler call's informer.object.key.
func (c Chain) Key() string { return c.Spans[0].Attr(tracing.KeyObjectKey) }

// Root is the chain's last span.
func (c Chain) Root() *Span { return c.Spans[len(c.Spans)-1] }

// IsHandlerCall reports whether s is a handler call span of the contract.
func IsHandlerCall(s *Span) bool {
	return s.Name == tracing.SpanOnAdd || s.Name == tracing.SpanOnUpdate || s.Name == tracing.SpanOnDelete
}

// IsQueued reports whether s is a queue wait span (DeltaFIFO.queued or
// RealFIFO.queued).
func IsQueued(s *Span) bool {
	return s.Name == tracing.SpanQueued || s.Name == tracing.SpanRealFIFOQueued
}

// IsDropped reports whether s is a queue wait span ended because the
// informer stopped before the delta was popped.
func IsDropped(s *Span) bool { return IsQueued(s) && s.Attr(tracing.KeyQueueDropped) == "true" }

// isObjectRoot reports whether s is a per-object root of the queue path,
// "ListAndWatch <source>" (not AddEventHandler, which never queues).
func isObjectRoot(s *Span) bool {
	return s.IsRoot() && strings.HasPrefix(s.Name, tracing.SpanRootPrefix)
}

// DroppedChains returns a chain per dropped queue wait span (see IsDropped),
// in start order: [queued, its parent]. Check accepts one as complete by
// drop when the parent is a "ListAndWatch <source>" root.
func (ix *Index) DroppedChains() []Chain {
	var out []Chain
	for _, s := range ix.ByID {
		if !IsDropped(s) {
			continue
		}
		c := Chain{Spans: []*Span{s}, Dropped: true}
		if p, ok := ix.ByID[s.ParentID]; ok {
			c.Spans = append(c.Spans, p)
			c.Complete = p.IsRoot()
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Chain) int { return a.Spans[0].Start.Compare(b.Spans[0].Start) })
	return out
}

// RootCheck is the verdict on one per-object root: Dropped when its delta
// was dropped at stop (complete by drop), Err when the trace breaks the
// contract (nil otherwise).
type RootCheck struct {
	Root    *Span
	Dropped bool
	Err     error
}

// CheckRoots applies the contract to every "ListAndWatch <source>" root:
// it has exactly one queue wait span (DeltaFIFO.queued or RealFIFO.queued),
// and then either that span says informer.queue.dropped=true and nothing
// else follows (dropped at stop), or the delta was popped: one HandleDeltas.
// A root with neither is what the contract calls lost. A link to the
// writer of the object (WriterLinks) is allowed once, and only on a
// "ListAndWatch watch" root of an ADDED or MODIFIED event. Handler chains
// below HandleDeltas are HandlerChains' business.
func (ix *Index) CheckRoots() []RootCheck {
	var out []RootCheck
	for _, r := range ix.Roots {
		if !isObjectRoot(r) {
			continue
		}
		var queued, handled []*Span
		for _, k := range ix.Children[r.SpanID] {
			switch {
			case IsQueued(k):
				queued = append(queued, k)
			case k.Name == tracing.SpanHandleDeltas:
				handled = append(handled, k)
			}
		}
		rc := RootCheck{Root: r}
		what := fmt.Sprintf("%s %s %s", r.Attr(tracing.KeyObjectKey), r.Name, r.Attr(tracing.KeyEventType))
		switch {
		case len(queued) == 0 && len(handled) == 0:
			rc.Err = fmt.Errorf("%s: lost: no queue wait span and no HandleDeltas (a delta queued at stop must end with %s=true)", what, tracing.KeyQueueDropped)
		case len(queued) == 0:
			rc.Err = fmt.Errorf("%s: handled, but no queue wait span", what)
		case len(queued) > 1:
			rc.Err = fmt.Errorf("%s: %d queue wait spans, want one (a wait ended twice?)", what, len(queued))
		case IsDropped(queued[0]) && len(handled) > 0:
			rc.Err = fmt.Errorf("%s: dropped at stop, yet handled by HandleDeltas", what)
		case IsDropped(queued[0]):
			rc.Dropped = true
		case len(handled) != 1:
			rc.Err = fmt.Errorf("%s: popped but %d HandleDeltas spans, want one", what, len(handled))
		}
		if rc.Err == nil {
			rc.Err = checkWriterLinks(r, what)
		}
		out = append(out, rc)
	}
	return out
}

// checkWriterLinks applies the contract's "From one controller to the
// next" to a root: at most one writer's link, and only on a watch event
// that adds or modifies.
func checkWriterLinks(r *Span, what string) error {
	switch event := r.Attr(tracing.KeyEventType); {
	case len(r.WriterLinks) == 0:
		return nil
	case len(r.WriterLinks) > 1:
		return fmt.Errorf("%s: %d links to a writer, want at most one", what, len(r.WriterLinks))
	case r.Name != tracing.SpanRootPrefix+"watch" || event != "ADDED" && event != "MODIFIED":
		return fmt.Errorf("%s: a link to a writer, but only an ADDED or MODIFIED watch event may have one", what)
	case !r.WriterLinks[0].IsValid():
		return fmt.Errorf("%s: its link to a writer names no valid span", what)
	}
	return nil
}

// HandlerChains returns a chain per handler call span, in start order.
func (ix *Index) HandlerChains() []Chain {
	calls := ix.inStartOrder(IsHandlerCall)
	out := make([]Chain, 0, len(calls))
	for _, h := range calls {
		spans, complete := ix.pathToRoot(h)
		out = append(out, Chain{Spans: spans, Complete: complete})
	}
	return out
}

// inStartOrder returns the spans keep selects, in start order: where
// HandlerChains and ReconcileChains begin their chains.
func (ix *Index) inStartOrder(keep func(*Span) bool) []*Span {
	var out []*Span
	for _, s := range ix.ByID {
		if keep(s) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b *Span) int { return a.Start.Compare(b.Start) })
	return out
}

// pathToRoot returns s and its ancestors, parent by parent, and whether
// the walk reached a root (false: a parent is missing from the index).
func (ix *Index) pathToRoot(s *Span) (spans []*Span, complete bool) {
	spans = []*Span{s}
	for !s.IsRoot() {
		p, ok := ix.ByID[s.ParentID]
		if !ok {
			return spans, false
		}
		spans = append(spans, p)
		s = p
	}
	return spans, true
}

// Check returns what is wrong with c by the contract, or nil: the names and
// order of the chain (a watch/list/resync root or an AddEventHandler root),
// the attributes every span must carry, and the kinds of the ends. A
// Dropped chain is complete by drop when it is a dropped queue wait span
// right under a "ListAndWatch <source>" root.
func (c Chain) Check() error {
	if c.Dropped {
		return c.checkDropped()
	}
	var problems []string
	names := make([]string, len(c.Spans))
	for i, s := range c.Spans {
		names[i] = s.Name
	}
	if !c.Complete {
		problems = append(problems, "a span is missing between the handler call and the root")
	}
	root := c.Root()
	listenerPart := []string{c.Spans[0].Name, tracing.SpanNextCh, tracing.SpanPop, tracing.SpanAddCh}
	switch {
	case root.Name == tracing.SpanAddEventHandle:
		if !slices.Equal(names, append(listenerPart, tracing.SpanAddEventHandle)) {
			problems = append(problems, "want On* ← nextCh ← pop ← addCh ← AddEventHandler")
		}
	case strings.HasPrefix(root.Name, tracing.SpanRootPrefix):
		want := append(listenerPart, tracing.SpanDistribute, tracing.SpanHandleDeltas, root.Name)
		if !slices.Equal(names, want) {
			problems = append(problems, "want On* ← nextCh ← pop ← addCh ← distribute ← HandleDeltas ← ListAndWatch <source>")
		}
		if root.Attr(tracing.KeyEventType) == "" {
			problems = append(problems, "root without "+string(tracing.KeyEventType))
		}
		if root.Kind != trace.SpanKindProducer {
			problems = append(problems, "root is not a PRODUCER span")
		}
	default:
		problems = append(problems, fmt.Sprintf("root %q is neither %q nor %q<source>", root.Name, tracing.SpanAddEventHandle, tracing.SpanRootPrefix))
	}
	key := c.Key()
	if key == "" {
		problems = append(problems, "handler call without "+string(tracing.KeyObjectKey))
	}
	for i, s := range c.Spans {
		if s.Attr(tracing.KeyInformerName) == "" {
			problems = append(problems, s.Name+" without "+string(tracing.KeyInformerName))
		}
		if s.Attr(tracing.KeyObjectKey) != key {
			problems = append(problems, fmt.Sprintf("%s has key %q, the handler call %q", s.Name, s.Attr(tracing.KeyObjectKey), key))
		}
		if i < len(listenerPart) && s.Attr(tracing.KeyListener) == "" {
			problems = append(problems, s.Name+" without "+string(tracing.KeyListener))
		}
		if s.TraceID != c.Spans[0].TraceID {
			problems = append(problems, s.Name+" is in another trace")
		}
	}
	if c.Spans[0].Kind != trace.SpanKindConsumer {
		problems = append(problems, "handler call is not a CONSUMER span")
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s %s [%s]: %s", key, c.Spans[0].Name, strings.Join(names, " ← "), strings.Join(problems, "; "))
}

// String says what the chain is: "ns/a OnUpdate ← … ← ListAndWatch watch",
// or for a chain complete by drop "ns/a ListAndWatch resync: dropped at stop".
func (c Chain) String() string {
	if c.Dropped {
		return fmt.Sprintf("%s %s: dropped at stop (%s=true)", c.Key(), c.Root().Name, tracing.KeyQueueDropped)
	}
	names := make([]string, len(c.Spans))
	for i, s := range c.Spans {
		names[i] = s.Name
	}
	return c.Key() + " " + strings.Join(names, " ← ")
}

func (c Chain) checkDropped() error {
	var problems []string
	q, root := c.Spans[0], c.Root()
	if !IsDropped(q) {
		problems = append(problems, fmt.Sprintf("%s is not a queue wait span with %s=true", q.Name, tracing.KeyQueueDropped))
	}
	if len(c.Spans) != 2 || !c.Complete || !isObjectRoot(root) {
		problems = append(problems, "want a dropped *.queued span right under a ListAndWatch <source> root")
	}
	if root.Kind != trace.SpanKindProducer {
		problems = append(problems, "root is not a PRODUCER span")
	}
	for _, s := range c.Spans {
		if s.Attr(tracing.KeyInformerName) == "" {
			problems = append(problems, s.Name+" without "+string(tracing.KeyInformerName))
		}
		if s.Attr(tracing.KeyObjectKey) != c.Key() {
			problems = append(problems, fmt.Sprintf("%s has key %q, the queued span %q", s.Name, s.Attr(tracing.KeyObjectKey), c.Key()))
		}
		if s.TraceID != q.TraceID {
			problems = append(problems, s.Name+" is in another trace")
		}
	}
	if q.Attr(tracing.KeyDeltaType) == "" {
		problems = append(problems, q.Name+" without "+string(tracing.KeyDeltaType))
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s %s (dropped at stop): %s", c.Key(), q.Name, strings.Join(problems, "; "))
}
