package testutil

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"
)

// Gets is what [TimedGets] saw: each GET's time, sorted, and the largest
// body.
type Gets struct {
	Times   []time.Duration
	MaxBody int
}

// Median is the middle GET's time.
func (g Gets) Median() time.Duration { return g.Times[len(g.Times)/2] }

// Slowest is the slowest GET's time.
func (g Gets) Slowest() time.Duration { return g.Times[len(g.Times)-1] }

// String says the median, the slowest and the largest body, for a test's
// log: the times are recorded, never asserted (a shared machine's time is
// not the code's).
func (g Gets) String() string {
	return fmt.Sprintf("median %v, slowest %v of %d; body up to %d bytes",
		g.Median().Round(time.Microsecond), g.Slowest().Round(time.Microsecond), len(g.Times), g.MaxBody)
}

// timedGetsClient bounds each GET: a server that stops answering fails
// the test in half a minute instead of holding it until go test's own
// timeout.
var timedGetsClient = &http.Client{Timeout: 30 * time.Second}

// TimedGets GETs url n times (n ≥ 1), as a page polling it would, and
// decodes each answer's JSON into into (the last one stays there); any
// failed request (none may take over 30 s), non-200 answer or
// undecodable body fails the test.
func TimedGets(t testing.TB, url string, n int, into any) Gets {
	t.Helper()
	g := Gets{Times: make([]time.Duration, 0, n)}
	for range n {
		t0 := time.Now()
		res, err := timedGetsClient.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		raw, err := io.ReadAll(res.Body)
		res.Body.Close()
		g.Times = append(g.Times, time.Since(t0))
		if err != nil {
			t.Fatalf("GET %s: reading the body: %v", url, err)
		}
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s: %s", url, res.Status, raw)
		}
		g.MaxBody = max(g.MaxBody, len(raw))
		if err := json.Unmarshal(raw, into); err != nil {
			t.Fatalf("GET %s: the body is not the JSON expected: %v", url, err)
		}
	}
	slices.Sort(g.Times)
	return g
}
