package terminal

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/demo/result"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

type Report struct {
	Index   *spancheck.Index
	Spans   []spancheck.Span
	Chains  []spancheck.Chain // one per handler call
	Roots   int               // per-object roots ("ListAndWatch <source>")
	Dropped int               // of which dropped at stop, complete by drop
	Broken  []error           // chains and roots that break the contract
}

// Analyse checks every handler call's chain and every per-object root:
// a root either reached HandleDeltas or was still queued when the informer
// stopped (informer.queue.dropped); anything else is a broken contract.
func Analyse(spans []spancheck.Span) *Report {
	r := &Report{Spans: spans, Index: spancheck.NewIndex(spans)}
	r.Chains = r.Index.HandlerChains()
	for _, c := range r.Chains {
		if err := c.Check(); err != nil {
			r.Broken = append(r.Broken, err)
		}
	}
	for _, c := range r.Index.DroppedChains() {
		if err := c.Check(); err != nil {
			r.Broken = append(r.Broken, err)
		}
	}
	for _, rc := range r.Index.CheckRoots() {
		r.Roots++
		if rc.Dropped {
			r.Dropped++
		}
		if rc.Err != nil {
			r.Broken = append(r.Broken, rc.Err)
		}
	}
	return r
}

// contractLine says, in one line, whether every trace kept the contract.
func (r *Report) contractLine() string {
	s := fmt.Sprintf("%d of %d handler calls trace back to their root through every stage of the contract", len(r.Chains)-countChainErrs(r), len(r.Chains))
	if r.Dropped > 0 {
		s += fmt.Sprintf("\n   %d deltas were still queued when the informer stopped: their traces end with a queue wait span marked %s=true", r.Dropped, tracing.KeyQueueDropped)
	}
	if n := len(r.Broken); n > 0 {
		s += fmt.Sprintf("; %d traces break the contract", n)
	}
	return s
}

func countChainErrs(r *Report) int {
	n := 0
	for _, c := range r.Chains {
		if c.Check() != nil {
			n++
		}
	}
	return n
}

// DrawShortSummary is the summary of a run without --verbose: the contract
// verdict, the mean time in each queue and the longest wait, in five lines.
// The longest wait is main's, the informer the lessons are about: the
// coalesce and order lessons' own informers wait longer by design (their
// pop loops are held until the lesson's writes are queued), and a headline
// about that hold would teach nothing. "" considers every informer.
func DrawShortSummary(w io.Writer, r *Report, pastLimit int, main string) {
	fmt.Fprintf(w, "\n━━ Summary: %d spans", len(r.Spans))
	if pastLimit > 0 {
		fmt.Fprintf(w, " (and %d past the in-memory limit)", pastLimit)
	}
	fmt.Fprintf(w, ", %d deltas traced through the queue\n   %s\n", r.Roots, r.contractLine())
	// Per queue: the main informer's, and the DeltaFIFO of the coalesce and
	// order lessons (whose pop loops are held by design), apart.
	total := map[string]time.Duration{}
	count := map[string]int{}
	var longest *spancheck.Span
	for i := range r.Spans {
		s := &r.Spans[i]
		if spancheck.IsDropped(s) {
			continue // waited until the stop, not until a pop
		}
		if spancheck.IsQueued(s) {
			total[s.Name] += s.Duration()
			count[s.Name]++
		}
		if tracing.IsInformerWait(s.Name) && (main == "" || s.Attr(tracing.KeyInformerName) == main) && (longest == nil || s.Duration() > longest.Duration()) {
			longest = s
		}
	}
	var parts []string
	for _, q := range []string{tracing.SpanRealFIFOQueued, tracing.SpanQueued} {
		if n := count[q]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s over %s", q, Ms(total[q]/time.Duration(n)), Plural(n, "delta")))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "   mean time in the queue: %s\n", strings.Join(parts, ", "))
		if longest != nil {
			where := ""
			if l := longest.Attr(tracing.KeyListener); l != "" {
				where = " in " + ShortListener(l)
			}
			fmt.Fprintf(w, "   longest wait in the informer %s: %s, %s of %s%s\n", longest.Attr(tracing.KeyInformerName), Ms(longest.Duration()), longest.Name, longest.Attr(tracing.KeyObjectKey), where)
		}
	}
}

// Find returns the root of the trace a showcase asks for, or nil.
func (r *Report) Find(s result.Showcase) *spancheck.Span {
	var found *spancheck.Span
	for _, root := range r.Index.Roots {
		if root.Attr(tracing.KeyObjectKey) == s.Key && s.Match(root) {
			found = root
			if !s.Last {
				break
			}
		}
	}
	return found
}

const barWidth = 32

func DrawWaterfalls(w io.Writer, r *Report, show []result.Showcase) {
	for _, s := range show {
		root := r.Find(s)
		if root == nil {
			fmt.Fprintf(w, "\n━━ %s — %s: no such trace was recorded\n", s.Key, s.Title)
			continue
		}
		title := s.Key + " — " + s.Title
		if s.Step != "" {
			title = "[" + s.Step + "] " + title
		}
		drawTrace(w, r.Index, root, title)
	}
}

type row struct {
	label string
	span  *spancheck.Span
}

func drawTrace(w io.Writer, ix *spancheck.Index, root *spancheck.Span, title string) {
	var rows []row
	var walk func(s *spancheck.Span, prefix, branch string)
	walk = func(s *spancheck.Span, prefix, branch string) {
		rows = append(rows, row{prefix + branch + s.Name + detail(s), s})
		kids := ix.Children[s.SpanID]
		next := prefix
		switch branch {
		case "├─ ":
			next += "│  "
		case "└─ ":
			next += "   "
		}
		for i, k := range kids {
			b := "├─ "
			if i == len(kids)-1 {
				b = "└─ "
			}
			walk(k, next, b)
		}
	}
	walk(root, "", "")
	t0, t1 := root.Start, root.End
	labelW := 0
	for _, rw := range rows {
		t1 = later(t1, rw.span.End)
		labelW = max(labelW, len([]rune(rw.label)))
	}
	total := t1.Sub(t0)
	fmt.Fprintf(w, "\n━━ %s  (trace %s)\n", title, root.TraceID)
	fmt.Fprintf(w, "   %-*s %10s %10s  |%-*s| %s\n", labelW, "span", "start", "took", barWidth, "0", Ms(total))
	for _, rw := range rows {
		s := rw.span
		fmt.Fprintf(w, "   %s%s %10s %10s  |%s|\n", rw.label, strings.Repeat(" ", labelW-len([]rune(rw.label))),
			"+"+Ms(s.Start.Sub(t0)), Ms(s.Duration()), bar(s.Start.Sub(t0), s.End.Sub(t0), total))
	}
	for _, l := range root.Links {
		fmt.Fprintf(w, "   %s\n", describeLink(ix, root, l.SpanID(), t0))
	}
}

// describeLink says what root's link points at: the reflector cycle that
// produced a watch event, or, for an object of an atomic relist or resync
// on the RealFIFO, the one queue entry it came in (RealFIFO.ReplacedAll or
// RealFIFO.SyncAll), with when that entry was queued and popped relative
// to t0, the root's start.
func describeLink(ix *spancheck.Index, root *spancheck.Span, id trace.SpanID, t0 time.Time) string {
	s := ix.ByID[id]
	switch {
	case slices.ContainsFunc(root.WriterLinks, func(w trace.SpanContext) bool { return w.SpanID() == id }):
		// From one controller to the next (docs/span-contract.md): the
		// object's tracing.k8s.io/traceparent names a span as its writer.
		// Anyone who can write the object can name any span there, so the
		// line says what the link is, a claim, not that the span wrote it.
		if s == nil {
			return fmt.Sprintf("root links to the span its object's annotation (%s) names as its writer (unverified): span %s, not among the recorded spans", tracing.AnnotationTraceparent, id)
		}
		return fmt.Sprintf("root links to the span its object's annotation (%s) names as its writer (unverified): %q %s (trace %s), started %s; a link, not a parent",
			tracing.AnnotationTraceparent, s.Name, s.SpanID, s.TraceID, signedMs(s.Start.Sub(t0)))
	case s == nil:
		return fmt.Sprintf("root links to span %s, not among the recorded spans", id)
	case s.Name == tracing.SpanRealFIFOReplacedAll || s.Name == tracing.SpanRealFIFOSyncAll:
		what, how, started := "its LIST", "listed", "started when the entry was queued"
		switch {
		case s.Name == tracing.SpanRealFIFOSyncAll:
			what = "the resync"
		case root.Name == tracing.SpanRootPrefix+"watchlist":
			// A streamed object's root starts when it arrived on the
			// stream, before the bookmark let the entry be queued.
			what, how, started = "its streamed state", "streamed", "started when its object arrived on the stream (a tombstone's when the entry was queued)"
		}
		n := ""
		if c := s.Attr(tracing.KeyListCount); c != "" {
			n = ", " + Plural(AtoiOr(c), "object") + " " + how
		}
		return fmt.Sprintf("root links to %s: %s as one queue entry (queued %s, popped %s%s; trace %s)\n"+
			"   every object of that entry has a trace like this one, %s",
			s.Name, what, signedMs(s.Start.Sub(t0)), signedMs(s.End.Sub(t0)), n, s.TraceID, started)
	default:
		return fmt.Sprintf("root links to the cycle span %s %s (trace %s)", s.Name, s.SpanID, s.TraceID)
	}
}

func signedMs(d time.Duration) string {
	if d < 0 {
		return "-" + Ms(-d)
	}
	return "+" + Ms(d)
}

func AtoiOr(s string) int {
	var n int
	_, _ = fmt.Sscan(s, &n)
	return n
}

// detail is the part of a span's attributes a reader needs on its line.
func detail(s *spancheck.Span) string {
	var parts []string
	add := func(format string, k ...any) { parts = append(parts, fmt.Sprintf(format, k...)) }
	switch {
	case strings.HasPrefix(s.Name, tracing.SpanRootPrefix):
		add("%s rv=%s", s.Attr(tracing.KeyEventType), s.Attr(tracing.KeyResourceVersion))
	case spancheck.IsQueued(s):
		add("%s", s.Attr(tracing.KeyDeltaType))
		if spancheck.IsDropped(s) {
			add("dropped at stop")
		}
	case s.Name == tracing.SpanHandleDeltas:
		switch typ, n := s.Attr(tracing.KeyDeltaType), s.Attr(tracing.KeyDeltasCount); {
		case typ == "ReplacedAll" || typ == "SyncAll":
			add("%s, one object of the atomic entry", typ)
		case n == "1" || n == "":
			add("%s", typ)
		default:
			add("%s, %s popped together", typ, n)
		}
		if b := s.Attr(tracing.KeyBatchSize); b != "" && b != "1" {
			add("batch of %s", b)
		}
		if s.Attr(tracing.KeyInitialList) == "true" {
			add("initial list")
		}
		if n := len(s.Links); n > 0 {
			add("links to %d other deltas' roots", n)
		}
	case s.Name == tracing.SpanAddCh:
		add("%s", ShortListener(s.Attr(tracing.KeyListener)))
	case s.Name == tracing.SpanPop:
		add("pending=%s", s.Attr(tracing.KeyListenerPending))
	}
	if len(parts) == 0 {
		return ""
	}
	return "  " + strings.Join(parts, ", ")
}

// ShortListener is a listener's name as a waterfall's narrow column
// shows it: the handler's type without its pointer and package
// ("*demo.slowHandler#2" → "slowHandler#2"); the full name is in the
// span's informer.listener.
func ShortListener(l string) string {
	l = strings.TrimPrefix(l, "*")
	typ, _, _ := strings.Cut(l, "#")
	if i := strings.LastIndexByte(typ, '.'); i >= 0 {
		l = l[i+1:]
	}
	return l
}

func bar(from, to, total time.Duration) string {
	if total <= 0 {
		return "▏" + strings.Repeat(" ", barWidth-1)
	}
	a := int(int64(from) * barWidth / int64(total))
	b := int(int64(to) * barWidth / int64(total))
	a = min(max(a, 0), barWidth-1)
	b = min(max(b, a), barWidth)
	cells := []rune(strings.Repeat(" ", barWidth))
	if b == a {
		cells[a] = '▏'
	}
	for i := a; i < b; i++ {
		cells[i] = '█'
	}
	return string(cells)
}

func Ms(d time.Duration) string { return fmt.Sprintf("%.3fms", float64(d)/float64(time.Millisecond)) }

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// stageOrder is the contract's per-object path, top to bottom. Which of
// its stages are waits is tracing.IsInformerWait's, the list the live
// view's page marks its waits by too.
var stageOrder = []string{tracing.SpanQueued, tracing.SpanRealFIFOQueued, tracing.SpanHandleDeltas, "Indexer.*", tracing.SpanDistribute,
	tracing.SpanAddCh, tracing.SpanPop, tracing.SpanNextCh, "On* (handler)"}

func stageOf(name string) string {
	switch {
	case strings.HasPrefix(name, tracing.SpanIndexerPrefix):
		return "Indexer.*"
	case name == tracing.SpanOnAdd || name == tracing.SpanOnUpdate || name == tracing.SpanOnDelete:
		return "On* (handler)"
	}
	return name
}

func DrawSummary(w io.Writer, r *Report, pastLimit int) {
	sum := summarise(r)
	fmt.Fprintf(w, "\n━━ Summary\n")
	fmt.Fprintf(w, "   %d spans, %d handler calls", len(r.Spans), len(r.Chains))
	if pastLimit > 0 {
		fmt.Fprintf(w, " (and %d spans past the in-memory limit, exported but not summarised)", pastLimit)
	}
	fmt.Fprintf(w, "\n   %s\n", r.contractLine())
	fmt.Fprintf(w, "   traces by root:")
	for _, n := range slices.Sorted(maps.Keys(sum.roots)) {
		fmt.Fprintf(w, "  %s %d", n, sum.roots[n])
	}
	fmt.Fprintln(w)
	sum.drawStages(w)
	sum.drawListeners(w)
	sum.drawLongestWaits(w)
	fmt.Fprintln(w)
}

// stat is the count, total and longest duration of some spans.
type stat struct {
	n          int
	sum, worst time.Duration
}

func (st *stat) add(d time.Duration) {
	st.n++
	st.sum += d
	st.worst = max(st.worst, d)
}

// summary is what DrawSummary draws, gathered from a report's spans.
type summary struct {
	stages    map[string]*stat // by stageOf
	roots     map[string]int   // traces by root span name
	listeners map[string]*stat // handler calls by listener
	waits     []*spancheck.Span
}

func summarise(r *Report) summary {
	sum := summary{stages: map[string]*stat{}, roots: map[string]int{}, listeners: map[string]*stat{}}
	for i := range r.Spans {
		s := &r.Spans[i]
		if s.IsRoot() {
			sum.roots[s.Name]++
			continue
		}
		if spancheck.IsDropped(s) {
			continue // waited until the stop, not until a pop
		}
		stage := stageOf(s.Name)
		if sum.stages[stage] == nil {
			sum.stages[stage] = &stat{}
		}
		sum.stages[stage].add(s.Duration())
		if tracing.IsInformerWait(s.Name) {
			sum.waits = append(sum.waits, s)
		}
		if spancheck.IsHandlerCall(s) {
			l := ShortListener(s.Attr(tracing.KeyListener))
			if sum.listeners[l] == nil {
				sum.listeners[l] = &stat{}
			}
			sum.listeners[l].add(s.Duration())
		}
	}
	slices.SortFunc(sum.waits, func(a, b *spancheck.Span) int { return cmp.Compare(b.Duration(), a.Duration()) })
	return sum
}

// drawStages is a row per stage of the contract, in the path's order, and
// the slowest on average.
func (sum summary) drawStages(w io.Writer) {
	fmt.Fprintf(w, "\n   %-18s %8s %12s %12s\n", "stage", "events", "mean", "max")
	slowest, slowestMean := "", time.Duration(-1)
	for _, name := range stageOrder {
		st := sum.stages[name]
		if st == nil {
			continue
		}
		mean := st.sum / time.Duration(st.n)
		if mean > slowestMean {
			slowest, slowestMean = name, mean
		}
		fmt.Fprintf(w, "   %-18s %8d %12s %12s\n", name, st.n, Ms(mean), Ms(st.worst))
	}
	if slowest != "" {
		fmt.Fprintf(w, "   slowest stage on average: %s (%s)\n", slowest, Ms(slowestMean))
	}
}

// drawListeners is a row per listener: its handler's calls and times.
func (sum summary) drawListeners(w io.Writer) {
	if len(sum.listeners) == 0 {
		return
	}
	fmt.Fprintf(w, "\n   %-24s %8s %12s %12s\n", "listener", "calls", "mean call", "max call")
	for _, n := range slices.Sorted(maps.Keys(sum.listeners)) {
		st := sum.listeners[n]
		fmt.Fprintf(w, "   %-24s %8d %12s %12s\n", n, st.n, Ms(st.sum/time.Duration(st.n)), Ms(st.worst))
	}
}

// drawLongestWaits is the five longest waits in a queue or a listener.
func (sum summary) drawLongestWaits(w io.Writer) {
	if len(sum.waits) == 0 {
		return
	}
	fmt.Fprintf(w, "\n   longest waits:\n")
	for _, s := range sum.waits[:min(5, len(sum.waits))] {
		who := ""
		if l := s.Attr(tracing.KeyListener); l != "" {
			who = " in " + ShortListener(l)
		}
		fmt.Fprintf(w, "   %12s  %-16s %s%s\n", Ms(s.Duration()), s.Name, s.Attr(tracing.KeyObjectKey), who)
	}
}

// RecordedOnly keeps the waterfalls whose trace was recorded: with a trace
// filter, the run's showcases may be about objects it left out.
func RecordedOnly(r *Report, show []result.Showcase) []result.Showcase {
	var out []result.Showcase
	for _, s := range show {
		if r.Find(s) != nil {
			out = append(out, s)
		}
	}
	return out
}

// SelectionNote says, under the summary of a filtered run, that its span
// counts cover only the selected objects, and gives the handler calls as
// the handlers counted them.
func SelectionNote(what string, r *Report, handlerCalls int64) string {
	return fmt.Sprintf("   only the objects selected by %s were traced: the spans and waterfalls above are theirs alone\n"+
		"   (%s, %s); the informer's handlers counted %s in all, traced or not",
		what, Plural(r.Roots, "delta"), Plural(len(r.Chains), "traced handler call"), Plural(int(handlerCalls), "call"))
}
