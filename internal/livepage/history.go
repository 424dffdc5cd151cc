package livepage

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The page's plots: the live view keeps, per series, the last points of
// the numbers its metrics report (informer_queued_items per informer,
// informer_handler_pending_notifications and
// informer_handler_processing_latency_seconds per handler, workqueue_depth,
// workqueue_adds_total and workqueue_work_duration_seconds per queue), and
// answers them as JSON (the page's api/history).
//
// It takes a sample only when a page asks, and at most once per interval
// however many pages ask: no goroutine, no timer, nothing runs while no
// page is open (the controller pays for the plots only while someone looks
// at them). The points of the minutes before a page opened are therefore
// not there: the plots begin when the first page does.
//
// Ours: client-go has no live view.

// Kind says how a series turns what it reads into points.
type Kind int

const (
	// Gauge: the value as read (a depth, a backlog).
	Gauge Kind = iota
	// Rate: Value is a cumulative count; a point is its increase per
	// second since the previous sample (what PromQL's rate() shows of a
	// counter).
	Rate
	// Mean: Value is a cumulative sum and Count a cumulative count (a
	// histogram's _sum and _count); a point is the mean of what was
	// observed since the previous sample, and there is no point when
	// nothing was (a mean of nothing is not zero).
	Mean
)

// Reading is one series' value at one sample.
type Reading struct {
	Metric string
	// Labels are the metric's attributes (name, handler).
	Labels map[string]string
	Unit   string
	Kind   Kind
	Value  float64
	Count  uint64 // Mean only
}

// Point is one point of a series: the time (Unix milliseconds) and the
// value. It is written as a two-element array, [t, v], which is what the
// page's plot reads and a third the size of an object per point.
type Point struct {
	T int64
	V float64
}

// MarshalJSON writes [t, v].
func (p Point) MarshalJSON() ([]byte, error) { return p.appendJSON(make([]byte, 0, 32)), nil }

func (p Point) appendJSON(b []byte) []byte {
	b = append(b, '[')
	b = strconv.AppendInt(b, p.T, 10)
	b = append(b, ',')
	v := p.V
	if math.IsNaN(v) || math.IsInf(v, 0) { // not JSON; no series makes one
		v = 0
	}
	b = strconv.AppendFloat(b, v, 'g', 6, 64)
	return append(b, ']')
}

// AppendJSON appends a as JSON, what encoding/json writes of it, written
// by hand: a page's first poll answers a few thousand points, and
// encoding/json spent most of that poll calling MarshalJSON per point and
// checking what it returned (BenchmarkLiveViewHistory in dropin).
func (a HistoryAnswer) AppendJSON(b []byte) []byte {
	b = append(b, `{"intervalMillis":`...)
	b = strconv.AppendInt(b, a.IntervalMillis, 10)
	b = append(b, `,"maxPoints":`...)
	b = strconv.AppendInt(b, int64(a.MaxPoints), 10)
	b = append(b, `,"now":`...)
	b = strconv.AppendInt(b, a.Now, 10)
	b = append(b, `,"series":[`...)
	for i, s := range a.Series {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"metric":`...)
		b = appendString(b, s.Metric)
		b = append(b, `,"unit":`...)
		b = appendString(b, s.Unit)
		b = append(b, `,"labels":{`...)
		for j, k := range slices.Sorted(maps.Keys(s.Labels)) {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendString(b, s.Labels[k])
		}
		b = append(b, `},"points":[`...)
		for j, p := range s.Points {
			if j > 0 {
				b = append(b, ',')
			}
			b = p.appendJSON(b)
		}
		b = append(b, "]}"...)
	}
	return append(b, "]}\n"...)
}

// appendString appends s as a JSON string, as encoding/json escapes it
// (names come from the user's process: a handler's type may hold any
// character). The names are plain ASCII nearly always, and quoted as
// they are; anything else goes through encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// UnmarshalJSON reads [t, v].
func (p *Point) UnmarshalJSON(b []byte) error {
	var a [2]float64
	if err := json.Unmarshal(b, &a); err != nil {
		return err
	}
	p.T, p.V = int64(a[0]), a[1]
	return nil
}

// Series is one series' points, oldest first.
type Series struct {
	Metric string            `json:"metric"`
	Unit   string            `json:"unit"`
	Labels map[string]string `json:"labels"`
	Points []Point           `json:"points"`
}

// HistoryAnswer is api/history's answer.
type HistoryAnswer struct {
	// IntervalMillis is the most often a sample is taken; MaxPoints how
	// many points a series keeps (the plots span their product).
	IntervalMillis int64 `json:"intervalMillis"`
	MaxPoints      int   `json:"maxPoints"`
	// Now is the server's clock (Unix milliseconds): the plots' right
	// edge.
	Now    int64    `json:"now"`
	Series []Series `json:"series"`
}

// History keeps the last points of the series its read function reports.
type History struct {
	interval  time.Duration
	maxPoints int
	read      func() []Reading
	now       func() time.Time

	mu sync.Mutex
	// Guarded by mu:
	sampled time.Time // when the last sample was taken
	samples uint64    // how many were taken
	series  map[string]*history
}

// history is one series and what its next point needs.
type history struct {
	s Series
	// The previous sample's reading, for Rate and Mean.
	prevAt    time.Time
	prevValue float64
	prevCount uint64
}

// HistoryOptions configure a [History].
type HistoryOptions struct {
	// Interval is the shortest time between two samples; MaxPoints how
	// many points each series keeps (the oldest are dropped).
	Interval  time.Duration
	MaxPoints int
	// Read reports every series now. It is called with no other lock of
	// the History's held but its own, at most once per Interval.
	Read func() []Reading
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// NewHistory returns an empty history: no sample is taken until
// [History.Since] or [History.Sample] is called.
func NewHistory(o HistoryOptions) *History {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &History{interval: o.Interval, maxPoints: max(o.MaxPoints, 1), read: o.Read, now: o.Now, series: map[string]*history{}}
}

// Samples is how many samples have been taken.
func (h *History) Samples() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.samples
}

// Sample takes a sample if the last one is at least the interval old (or
// none was taken): what a process that keeps its history whether or not a
// page asks calls once an interval. It reports whether it took one.
func (h *History) Sample() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	if h.samples == 0 || now.Sub(h.sampled) >= h.interval {
		h.sample_locked(now)
		return true
	}
	return false
}

// Since takes a sample if the last one is at least the interval old, and
// answers every series' points later than since (Unix milliseconds; 0 for
// all): a page asks with the time of the last point it has, and gets only
// the new ones.
func (h *History) Since(since int64) HistoryAnswer {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	if h.samples == 0 || now.Sub(h.sampled) >= h.interval {
		h.sample_locked(now)
	}
	out := HistoryAnswer{IntervalMillis: h.interval.Milliseconds(), MaxPoints: h.maxPoints, Now: now.UnixMilli(), Series: []Series{}}
	for _, k := range slices.Sorted(maps.Keys(h.series)) {
		s := h.series[k].s
		i, _ := slices.BinarySearchFunc(s.Points, since, func(p Point, t int64) int {
			if p.T <= t {
				return -1
			}
			return 1
		})
		s.Points = slices.Clone(s.Points[i:])
		out.Series = append(out.Series, s)
	}
	return out
}

// sample_locked reads every series and appends its point; it drops the
// points older than the window (interval × maxPoints: after a page was
// closed, what came before is gone rather than joined to the present by a
// line) and the series left with none (an informer stopped, a queue shut
// down).
func (h *History) sample_locked(now time.Time) {
	h.sampled = now
	h.samples++
	t := now.UnixMilli()
	for _, r := range h.read() {
		k := seriesKey(r)
		e := h.series[k]
		if e == nil {
			e = &history{s: Series{Metric: r.Metric, Unit: r.Unit, Labels: r.Labels, Points: make([]Point, 0, min(h.maxPoints, 64))}}
			h.series[k] = e
		}
		if v, ok := e.point(r, now, h.window()); ok {
			if len(e.s.Points) >= h.maxPoints {
				// Dropped from the front: append copies the kept points
				// to a new array once the old one's end is reached, so
				// each sample costs O(1) amortized (shifting every point
				// down each second was most of a poll's time with a
				// hundred series).
				e.s.Points = e.s.Points[len(e.s.Points)-h.maxPoints+1:]
			}
			e.s.Points = append(e.s.Points, Point{T: t, V: v})
		}
		e.prevAt, e.prevValue, e.prevCount = now, r.Value, r.Count
	}
	oldest := now.Add(-h.window()).UnixMilli()
	for k, e := range h.series {
		i := 0
		for i < len(e.s.Points) && e.s.Points[i].T < oldest {
			i++
		}
		e.s.Points = e.s.Points[i:]
		if len(e.s.Points) == 0 && e.prevAt.Before(now) {
			delete(h.series, k)
		}
	}
}

// window is how far back the plots go.
func (h *History) window() time.Duration { return h.interval * time.Duration(h.maxPoints) }

// point is r's point now, and whether it has one. A Rate or a Mean needs
// a previous reading, no older than the window: one from before the page
// was closed would spread the whole time no page was open over one point.
// None is made across a counter that went down (the series was made anew
// under the same name).
func (e *history) point(r Reading, now time.Time, window time.Duration) (float64, bool) {
	if r.Kind == Gauge {
		return r.Value, true
	}
	dt := now.Sub(e.prevAt)
	if e.prevAt.IsZero() || dt <= 0 || dt > window || r.Value < e.prevValue {
		return 0, false
	}
	switch r.Kind {
	case Rate:
		return (r.Value - e.prevValue) / dt.Seconds(), true
	case Mean:
		if r.Count <= e.prevCount {
			return 0, false
		}
		return (r.Value - e.prevValue) / float64(r.Count-e.prevCount), true
	}
	return 0, false
}

// seriesKey names a series: its metric and its labels, sorted (a series
// has one or two: no slice is allocated to sort them).
func seriesKey(r Reading) string {
	var keys [4]string
	names := keys[:0]
	if len(r.Labels) > len(keys) {
		names = make([]string, 0, len(r.Labels))
	}
	for k := range r.Labels {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString(r.Metric)
	for _, k := range names {
		b.WriteByte(0)
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(r.Labels[k])
	}
	return b.String()
}
