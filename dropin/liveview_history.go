package dropin

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"

	"github.com/informer-anatomy/informer-anatomy/internal/bubble"
	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
	imetrics "github.com/informer-anatomy/informer-anatomy/internal/metrics"
	"github.com/informer-anatomy/informer-anatomy/liveprobe"
)

// The live view's plots: api/history answers the last five minutes of the
// numbers this package's metrics report, per informer, handler and traced
// queue, sampled once a second from the first LiveViewHandler on (the
// first made outside a testing/synctest bubble), whether
// or not a page is open (so that a page opened after a burst shows it);
// nothing is sampled, and nothing runs, before a handler is made.
const (
	liveHistoryInterval  = time.Second
	liveHistoryMaxPoints = 300
)

// liveHistory is the process's history, made by the first request for it.
var liveHistory atomic.Pointer[livepage.History]

func history() *livepage.History {
	if h := liveHistory.Load(); h != nil {
		return h
	}
	liveHistory.CompareAndSwap(nil, newLiveHistory(nil))
	return liveHistory.Load()
}

// newLiveHistory is the process's history on clock now (nil: time.Now).
func newLiveHistory(now func() time.Time) *livepage.History {
	return livepage.NewHistory(livepage.HistoryOptions{Interval: liveHistoryInterval, MaxPoints: liveHistoryMaxPoints, Read: historyReadings, Now: now})
}

// historySampler is started by the first LiveViewHandler made outside
// every testing/synctest bubble.
var historySampler struct {
	mu      sync.Mutex
	started bool // guarded by mu
}

// startHistorySampler samples the process's history once a second from
// now on, for the life of the process: one goroutine, and each second one
// reading of the counters a page's poll reads, each series keeping its
// last 300 points (the memory is bounded by the number of informers,
// handlers and queues, not by time).
//
// Called inside a synctest bubble, it starts nothing, and a later call
// outside does. A goroutine started there would belong to the bubble for
// the life of the process, waiting on the bubble's ticker: synctest.Test
// panics when its function returns with such a goroutine left ("main
// bubble goroutine has exited but blocked goroutines remain"), and the
// sampler would read only that bubble's queues (internal/bubble).
func startHistorySampler() {
	if bubble.ID() != 0 {
		return
	}
	historySampler.mu.Lock()
	defer historySampler.mu.Unlock()
	if historySampler.started {
		return
	}
	historySampler.started = true
	go func() {
		for range time.NewTicker(liveHistoryInterval).C {
			if !liveHistoryManual.Load() {
				sampleHistory()
			}
		}
	}()
}

// liveHistoryManual: a test drives the samples itself, on its own clock
// (UseLiveHistoryClock); the ticker's are skipped.
var liveHistoryManual atomic.Bool

// sampleHistory is one tick: a sample of the history (if the last is an
// interval old), and the heap told to each informer's probe (a relist's
// peak: liveprobe's NoteHeap).
func sampleHistory() {
	history().Sample()
	noteHeap(liveprobe.ReadHeap())
}

// noteHeap tells every live informer's probe the heap now.
func noteHeap(bytes uint64) {
	infs, _ := live.snapshot()
	for _, e := range infs {
		e.probe.NoteHeap(bytes)
	}
}

// serveHistory answers api/history?since=<Unix ms>: the points after
// since (all of them without it).
func serveHistory(w http.ResponseWriter, r *http.Request) {
	var since int64
	if v := r.URL.Query().Get("since"); v != "" {
		var err error
		if since, err = strconv.ParseInt(v, 10, 64); err != nil {
			livepage.WriteJSON(w, http.StatusBadRequest, map[string]string{"error": "since is a time in Unix milliseconds: " + err.Error()})
			return
		}
	}
	livepage.WriteRawJSON(w, http.StatusOK, history().Since(since).AppendJSON(nil))
}

// historyReadings reads, for every live informer, handler and traced
// queue, the numbers of these metrics, from the counters the page's state
// reads:
//
//   - informer_queued_items: the informer's queue length, as its gauge
//     reads it;
//   - informer_handler_pending_notifications: a handler's addCh and
//     buffer, as its gauge reads them;
//   - informer_handler_processing_latency_seconds: the mean time of the
//     handler's calls that ended since the last sample (the histogram's
//     sum and count over the interval);
//   - workqueue_depth: the queue's Stats().Depth (its Len, or the keys
//     waiting for a worker if more);
//   - workqueue_adds_total: adds that made a key dirty (the traced
//     queue's adds less those merged into a waiting key), per second;
//   - workqueue_work_duration_seconds: the mean Get-to-Done time of the
//     keys done since the last sample.
//
// The last three but the depth come from the traced queue's Stats, which
// count only while tracing is on (QueueStats).
func historyReadings() []livepage.Reading {
	infs, queues := live.snapshot()
	var out []livepage.Reading
	seen := map[string]int{}
	for _, e := range infs {
		st, err := processor.ReadStats(e.inf.inner)
		if err != nil || !st.Started {
			continue
		}
		name := distinct(seen, "i\x00", e.name)
		out = append(out, livepage.Reading{Metric: imetrics.InformerQueuedItems, Labels: map[string]string{"name": name},
			Unit: "items", Kind: livepage.Gauge, Value: float64(st.QueueLen)})
		for _, l := range st.Listeners {
			labels := map[string]string{"name": name, "handler": l.Name}
			out = append(out,
				livepage.Reading{Metric: imetrics.HandlerPendingNotifications, Labels: labels, Unit: "notifications", Kind: livepage.Gauge, Value: float64(l.AddCh + l.Pending)},
				livepage.Reading{Metric: imetrics.HandlerProcessingLatency, Labels: labels, Unit: "s", Kind: livepage.Mean, Value: l.HandlerTime.Seconds(), Count: l.TimedCalls})
		}
	}
	for _, q := range queues {
		labels := map[string]string{"name": distinct(seen, "q\x00", q.name)}
		// Each add is merged at most once: Merged <= Adds, read under
		// one lock.
		dirtied := q.stats.Adds - min(q.stats.Merged, q.stats.Adds)
		out = append(out,
			livepage.Reading{Metric: imetrics.WorkqueueDepth, Labels: labels, Unit: "keys", Kind: livepage.Gauge, Value: float64(q.stats.Depth)},
			livepage.Reading{Metric: imetrics.WorkqueueAdds, Labels: labels, Unit: "adds/s", Kind: livepage.Rate, Value: float64(dirtied)},
			livepage.Reading{Metric: imetrics.WorkqueueWorkDuration, Labels: labels, Unit: "s", Kind: livepage.Mean, Value: q.stats.ProcessTotal.Seconds(), Count: q.stats.Processed})
	}
	return out
}

// distinct is name, or name with " #2", " #3"… for the second and later
// informer (or queue) of the same name in one sample: two ConfigMap
// informers would otherwise be one series, their readings mixed.
func distinct(seen map[string]int, kind, name string) string {
	seen[kind+name]++
	if n := seen[kind+name]; n > 1 {
		return name + " #" + strconv.Itoa(n)
	}
	return name
}
