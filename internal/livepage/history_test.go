package livepage

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// counting is a read function over a few series, counting its calls.
type counting struct {
	mu    sync.Mutex
	calls int
	depth float64
	adds  float64
	sum   float64
	count uint64
	gone  bool // the queue's series are no longer reported
}

func (c *counting) read() []Reading {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	out := []Reading{{Metric: "informer_queued_items", Labels: map[string]string{"name": "pods"}, Kind: Gauge, Value: 1}}
	if !c.gone {
		q := map[string]string{"name": "q"}
		out = append(out,
			Reading{Metric: "workqueue_depth", Labels: q, Kind: Gauge, Value: c.depth},
			Reading{Metric: "workqueue_adds_total", Labels: q, Kind: Rate, Value: c.adds},
			Reading{Metric: "workqueue_work_duration_seconds", Labels: q, Kind: Mean, Value: c.sum, Count: c.count})
	}
	return out
}

func (c *counting) set(f func(c *counting)) { c.mu.Lock(); defer c.mu.Unlock(); f(c) }

func (c *counting) reads() int { c.mu.Lock(); defer c.mu.Unlock(); return c.calls }

func newTestHistory(maxPoints int) (*History, *counting, *fakeClock) {
	c := &counting{}
	clk := &fakeClock{t: time.Unix(1_000_000, 0)}
	return NewHistory(HistoryOptions{Interval: time.Second, MaxPoints: maxPoints, Read: c.read, Now: clk.now}), c, clk
}

func series(a HistoryAnswer, metric string) (Series, bool) {
	for _, s := range a.Series {
		if s.Metric == metric {
			return s, true
		}
	}
	return Series{}, false
}

// Nothing is sampled while nobody asks, however long: no page open, no
// work for the controller. The first read samples; reads within the same
// interval, from any number of pages at once, do not sample again.
func TestHistorySamplesOnlyWhenReadAndAtMostOncePerInterval(t *testing.T) {
	h, c, clk := newTestHistory(10)
	clk.add(time.Hour)
	assert.Zero(t, c.reads(), "no read without a page")
	assert.Zero(t, h.Samples())

	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { h.Since(0) })
	}
	wg.Wait()
	assert.Equal(t, 1, c.reads(), "twenty pages in one interval: one sample")
	clk.add(999 * time.Millisecond)
	h.Since(0)
	assert.Equal(t, 1, c.reads(), "still within the interval")
	clk.add(time.Millisecond)
	h.Since(0)
	assert.Equal(t, 2, c.reads(), "the interval passed: a second sample")
	assert.Equal(t, uint64(2), h.Samples())
	clk.add(time.Hour)
	assert.Equal(t, 2, c.reads(), "the page closed: nothing more")
}

// Each series keeps at most MaxPoints points, the newest; sampled three
// times as often, it still holds MaxPoints, ending at the last sample.
func TestHistoryKeepsABoundedNumberOfPoints(t *testing.T) {
	const maxPoints = 5
	h, c, clk := newTestHistory(maxPoints)
	var last HistoryAnswer
	for i := range 3 * maxPoints {
		c.set(func(c *counting) { c.depth = float64(i) })
		last = h.Since(0)
		clk.add(time.Second)
	}
	require.Len(t, last.Series, 4)
	for _, s := range last.Series {
		assert.LessOrEqual(t, len(s.Points), maxPoints, s.Metric)
	}
	depth, ok := series(last, "workqueue_depth")
	require.True(t, ok)
	require.Len(t, depth.Points, maxPoints)
	var values []float64
	for _, p := range depth.Points {
		values = append(values, p.V)
	}
	assert.Equal(t, []float64{10, 11, 12, 13, 14}, values, "the newest points, oldest first")
	assert.Equal(t, maxPoints, last.MaxPoints)
	assert.Equal(t, int64(1000), last.IntervalMillis)
}

// A Rate is the counter's increase per second; a Mean the mean of what
// was observed in the interval, with no point when nothing was; Since
// answers only the points after the time given.
func TestHistoryRatesMeansAndSince(t *testing.T) {
	h, c, clk := newTestHistory(100)
	h.Since(0) // the first sample: a base, no rate yet
	clk.add(time.Second)
	c.set(func(c *counting) { c.adds, c.sum, c.count = 10, 0.4, 4 })
	first := h.Since(0)
	clk.add(2 * time.Second)
	c.set(func(c *counting) { c.adds = 30 }) // no work finished
	second := h.Since(0)
	clk.add(time.Second)
	c.set(func(c *counting) { c.sum, c.count = 1.0, 6 })
	third := h.Since(second.Now)

	adds, _ := series(second, "workqueue_adds_total")
	require.Len(t, adds.Points, 2)
	assert.InDelta(t, 10, adds.Points[0].V, 1e-9, "10 adds in 1 s")
	assert.InDelta(t, 10, adds.Points[1].V, 1e-9, "20 adds in 2 s")
	work, _ := series(second, "workqueue_work_duration_seconds")
	require.Len(t, work.Points, 1, "no point where no work ended")
	assert.InDelta(t, 0.1, work.Points[0].V, 1e-9)
	assert.Equal(t, first.Now, work.Points[0].T)

	work, _ = series(third, "workqueue_work_duration_seconds")
	require.Len(t, work.Points, 1, "since: only the new point")
	assert.InDelta(t, 0.3, work.Points[0].V, 1e-9, "0.6 s over 2 more")
	adds, _ = series(third, "workqueue_adds_total")
	require.Len(t, adds.Points, 1)
	assert.InDelta(t, 0, adds.Points[0].V, 1e-9)

	b, err := json.Marshal(third)
	require.NoError(t, err)
	var back HistoryAnswer
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, third, back, "points as [t, v], read back the same")
	assert.Contains(t, string(b), `"points":[[`)
}

// A series no longer reported (its queue shut down) leaves once its
// points are older than the window; a rate after the page was closed
// longer than the window starts again from a new base rather than
// spreading the whole gap over one point.
func TestHistoryForgetsGoneSeriesAndGaps(t *testing.T) {
	h, c, clk := newTestHistory(3)
	h.Since(0)
	clk.add(time.Second)
	c.set(func(c *counting) { c.adds = 5; c.gone = true })
	a := h.Since(0)
	_, ok := series(a, "workqueue_depth")
	assert.True(t, ok, "its points are still in the window")
	clk.add(10 * time.Second)
	a = h.Since(0)
	_, ok = series(a, "workqueue_depth")
	assert.False(t, ok, "gone with its points")
	assert.Len(t, a.Series, 1)

	c.set(func(c *counting) { c.gone = false; c.adds = 100 })
	h.Since(0)
	clk.add(time.Hour)
	c.set(func(c *counting) { c.adds = 3700 })
	a = h.Since(0)
	adds, _ := series(a, "workqueue_adds_total")
	assert.Empty(t, adds.Points, "no rate across an hour nobody watched")
	clk.add(time.Second)
	c.set(func(c *counting) { c.adds = 3701 })
	a = h.Since(0)
	adds, _ = series(a, "workqueue_adds_total")
	require.Len(t, adds.Points, 1)
	assert.InDelta(t, 1, adds.Points[0].V, 1e-9)
}

// AppendJSON writes what encoding/json writes, escapes and all.
func TestHistoryAnswerAppendJSONIsEncodingJSONs(t *testing.T) {
	a := HistoryAnswer{IntervalMillis: 1000, MaxPoints: 300, Now: 123, Series: []Series{
		{Metric: "m", Unit: "s", Labels: map[string]string{"name": `a"b<c>`, "handler": "x\u2028y"}, Points: []Point{{1, 0.5}, {2, 1e-7}, {3, 12345678}}},
		{Metric: "n", Unit: "keys", Labels: map[string]string{}, Points: []Point{}},
	}}
	want, err := json.Marshal(a)
	require.NoError(t, err)
	assert.Equal(t, string(want)+"\n", string(a.AppendJSON(nil)))
}
