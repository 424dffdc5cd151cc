//go:build workshop

package rewatch

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/informer-anatomy/informer-anatomy/demo/liveview"
	"github.com/informer-anatomy/informer-anatomy/liveprobe"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestPredictions(t *testing.T) {
	lv := kit.StartLiveView(t)
	lv.Synced()
	gotDrop := requestsAfter(t, lv, "drop-watch")
	gotRelist := requestsAfter(t, lv, "relist")
	if d := kit.DiffList(AfterDropWatch, gotDrop); d != "" {
		t.Errorf("AfterDropWatch: you predicted %q, not the requests the reflector sent after \"drop the watch\": %s", AfterDropWatch, d)
	}
	if d := kit.DiffList(AfterRelist, gotRelist); d != "" {
		t.Errorf("AfterRelist: you predicted %q, not the requests the reflector sent after \"compact + force a 410 relist\": %s", AfterRelist, d)
	}
}

// requestsAfter creates a pod and waits for its event on the watch, then
// presses control and returns the requests the reflector sent from then
// until it has been watching again, with nothing new, for two seconds.
func requestsAfter(t *testing.T, lv *kit.LiveView, control string) []string {
	t.Helper()
	st := lv.State()
	events := st.Pipeline.Reflector.WatchEvents
	lv.Press("create-pod", 0)
	st = lv.WaitState("the new pod's event on the watch", func(st liveview.State) bool {
		return st.Pipeline.Reflector.WatchEvents > events && kit.Settled(st.Pipeline)
	})
	r := st.Pipeline.Reflector
	s, logged := r.ResourceVersion, len(r.Requests)
	lv.Press(control, 0)
	var quietSince time.Time
	var last int
	st = lv.WaitState("the reflector to watch again after "+control, func(st liveview.State) bool {
		r := st.Pipeline.Reflector
		if n := len(r.Requests); n != last {
			last, quietSince = n, time.Now()
		}
		return r.Phase == "WATCH" && len(r.Requests) > logged && time.Since(quietSince) > 2*time.Second
	})
	r = st.Pipeline.Reflector
	if len(r.Requests) == liveprobe.RecentRequests {
		t.Fatalf("the request log is full (%d requests): cannot tell which requests followed %s; run the checker again", liveprobe.RecentRequests, control)
	}
	var out []string
	for _, q := range r.Requests[logged:] {
		out = append(out, describe(q, s))
	}
	return out
}

// describe writes a request as the exercise asks: "VERB FROM", FROM
// relative to s, and " 410" for a 410 Expired (any other failure as it was).
func describe(q liveprobe.ProbedRequest, s string) string {
	from := q.ResourceVersion
	n, err1 := strconv.ParseUint(q.ResourceVersion, 10, 64)
	sn, err2 := strconv.ParseUint(s, 10, 64)
	switch {
	case q.ResourceVersion == s:
		from = "S"
	case q.ResourceVersion == "":
		from = `""`
	case q.ResourceVersion == "0":
	case err1 == nil && err2 == nil && n > sn:
		from = "later"
	case err1 == nil && err2 == nil && n < sn:
		from = "older"
	}
	out := fmt.Sprintf("%s %s", q.Verb, from)
	switch q.Outcome {
	case "":
	case "ERROR Expired":
		out += " 410"
	default:
		out += " (" + q.Outcome + ")"
	}
	return out
}
