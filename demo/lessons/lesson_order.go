package lessons

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/demo/result"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// order: the same writes watched by two informers, one on each queue, shown
// side by side from each handler's recorded calls: the RealFIFO hands every
// event over in the API server's order, the DeltaFIFO a key's changes in a
// row, keys in first-arrival order.
func init() {
	register(Lesson{
		Name:  "order",
		Order: 30,
		Text: func(*Env) string {
			return "the same six writes (update a, b, a, delete b, update c, a) watched by two informers, one on each queue."
		},
		LookFor: "  Look for: the RealFIFO column is the API server's column, call for call: every event in order.\n" +
			"  The DeltaFIFO keeps one entry per key, in the order keys first arrived (the initial state: a, b, c);\n" +
			"  a change to a key still queued joins its entry, so a key's calls come in a row. Each key's own\n" +
			"  calls are in order on both queues; only the order across keys differs.",
		Run: func(e *Env) (Outcome, error) {
			res, err := e.orderLesson()
			if err != nil {
				return Outcome{}, err
			}
			return Outcome{Line: res.summary(), Detail: res.table(), order: res, Show: []result.Showcase{
				result.Show("order lesson, DeltaFIFO: the initial state's delta popped with the key's later changes", lessonNamespace+"/order-a",
					func(r *spancheck.Span) bool {
						// Streamed, or LISTed where the informer cannot stream.
						listed := result.RootIs("ListAndWatch watchlist", "LISTED")(r) || result.RootIs("ListAndWatch list", "LISTED")(r)
						return listed && r.Attr(tracing.KeyInformerName) == "pods-order-deltafifo"
					}),
			}}, nil
		},
	})
}

// orderPods are the order lesson's pods, listed before its writes. Both
// informers' pop loops are held until the writes are queued (popHold), so
// on the DeltaFIFO every write joins its key's listed delta, still queued.
var orderPods = []string{"order-a", "order-b", "order-c"}

// orderWrite is one write of the order lesson, in the order it is sent.
type orderWrite struct {
	name   string
	delete bool
}

var orderWrites = []orderWrite{
	{name: "order-a"}, {name: "order-b"}, {name: "order-a"}, {name: "order-b", delete: true}, {name: "order-c"}, {name: "order-a"},
}

// orderResult is the order lesson's three columns: what the API server
// did (the initial state, then each write's event, in resourceVersion order) and
// what the handler of each queue's informer was called with.
type orderResult struct {
	server, realFIFO, deltaFIFO []call
}

// orderLesson fetches the order pods with two informers, one per queue;
// once both initial states are in (and before either informer queues its
// own), it sends orderWrites; both watches then deliver the same events,
// and neither informer pops before they are queued. Every column is read
// back from what really happened: the server's write responses and each
// handler's recorded calls.
func (e *Env) orderLesson() (*orderResult, error) {
	res := &orderResult{}
	keys := map[string]bool{}
	for _, n := range orderPods {
		// Left by an earlier run of the lesson: its informers list afresh.
		if err := e.deleteIfThere(apiserver.Pods, lessonNamespace, n); err != nil {
			return nil, err
		}
	}
	for _, n := range orderPods {
		p, err := e.srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: lessonNamespace, Name: n, Labels: map[string]string{orderLabel: "true"}}})
		if err != nil {
			return nil, err
		}
		m, _ := meta.Accessor(p)
		res.server = append(res.server, call{"LISTED", lessonNamespace + "/" + n, m.GetResourceVersion()})
		keys[lessonNamespace+"/"+n] = true
	}
	// Both informers' initial states meet here; the second to arrive writes.
	var mu sync.Mutex
	arrived := 0
	written := make(chan struct{})
	var writeErr error
	barrier := func() (string, error) {
		mu.Lock()
		arrived++
		last := arrived == 2
		mu.Unlock()
		if last {
			writeErr = e.orderWrites(res)
			close(written)
		}
		select {
		case <-written:
			return res.lastWrittenRV(), writeErr
		case <-e.context().Done():
			return "", fmt.Errorf("stopped while waiting for the other informer's LIST: %w", e.context().Err())
		case <-time.After(e.stepTimeout):
			return "", fmt.Errorf("gave up after %v waiting for the other informer's initial state", e.stepTimeout)
		}
	}
	rf, err := e.startLessonInformer("pods-order-realfifo", processor.RealFIFOQueue, orderLabel+"=true", barrier)
	if err != nil {
		return nil, err
	}
	defer rf.stop() // stop waits for the informer; a second call is a no-op
	df, err := e.startLessonInformer("pods-order-deltafifo", processor.DeltaFIFOQueue, orderLabel+"=true", barrier)
	if err != nil {
		return nil, err
	}
	defer df.stop()
	var caughtUp error
	for _, l := range []*lessonInformer{rf, df} {
		if caughtUp = l.caughtUp(e, "the order lesson's writes to reach both informers"); caughtUp != nil {
			break
		}
	}
	rf.stop()
	df.stop()
	if err := errors.Join(rf.err(), df.err(), caughtUp); err != nil {
		return nil, err
	}
	res.realFIFO = rf.handler.recorded(keys)
	res.deltaFIFO = df.handler.recorded(keys)
	return res, nil
}

// orderWrites sends orderWrites and records each one's event in res.server.
func (e *Env) orderWrites(res *orderResult) error {
	v := map[string]int{}
	for _, w := range orderWrites {
		key := lessonNamespace + "/" + w.name
		if w.delete {
			if err := e.srv.Delete(apiserver.Pods, lessonNamespace, w.name); err != nil {
				return err
			}
			res.server = append(res.server, call{"DELETED", key, ""})
			continue
		}
		v[w.name]++
		p, err := e.updateObj(lessonNamespace, w.name, fmt.Sprint(v[w.name]))
		if err != nil {
			return err
		}
		res.server = append(res.server, call{"MODIFIED", key, p.ResourceVersion})
	}
	return nil
}

// lastWrittenRV is the resourceVersion of the last write whose event
// carries one (a DELETED is recorded without): what the lesson informers'
// pop loops wait for their reflectors to reach (popHold).
func (r *orderResult) lastWrittenRV() string {
	for i := len(r.server) - 1; i >= 0; i-- {
		if c := r.server[i]; c.op != "LISTED" && c.rv != "" {
			return c.rv
		}
	}
	return ""
}

// handlerOp is the handler call a server event becomes: what each column
// is compared with.
func handlerOp(serverOp string) string {
	switch serverOp {
	case "LISTED":
		return "OnAdd"
	case "DELETED":
		return "OnDelete"
	}
	return "OnUpdate"
}

// asHandlerCalls is the server column as the handler calls it should become
// when every event is handed over in order.
func (r *orderResult) asHandlerCalls() []call {
	out := make([]call, len(r.server))
	for i, c := range r.server {
		out[i] = call{handlerOp(c.op), c.key, c.rv}
	}
	return out
}

// sameCalls compares calls by op and key, and by rv except for a delete
// (the server's DELETED carries the last rv, a handler's OnDelete the
// object's as cached, which is the same; a tombstone has none).
func sameCalls(a, b []call) bool {
	return slices.EqualFunc(a, b, func(x, y call) bool {
		return x.op == y.op && x.key == y.key && (x.op == "OnDelete" || x.rv == y.rv)
	})
}

// groups is a column's runs of calls for one key: on the DeltaFIFO, a key's
// merged deltas are handed over one after another.
func groups(calls []call) [][]call {
	var out [][]call
	for _, c := range calls {
		if n := len(out); n > 0 && out[n-1][0].key == c.key {
			out[n-1] = append(out[n-1], c)
			continue
		}
		out = append(out, []call{c})
	}
	return out
}

// merged reports whether the DeltaFIFO column handed some key's changes
// over together that the server made apart: a run of calls for one key
// longer than any run of that key in the server's order.
func (r *orderResult) merged() bool {
	longest := map[string]int{}
	for _, g := range groups(r.server) {
		longest[g[0].key] = max(longest[g[0].key], len(g))
	}
	for _, g := range groups(r.deltaFIFO) {
		if len(g) > longest[g[0].key] {
			return true
		}
	}
	return false
}

// summary is the lesson's one line for the default output.
func (r *orderResult) summary() string {
	rf := "NOT in the server's order"
	if sameCalls(r.realFIFO, r.asHandlerCalls()) {
		rf = "in the server's order"
	}
	var parts []string
	for _, g := range groups(r.deltaFIFO) {
		parts = append(parts, fmt.Sprintf("%s×%d", g[0].key[len(lessonNamespace)+1:], len(g)))
	}
	df := "merged each key's changes: " + strings.Join(parts, " ")
	if !r.merged() {
		df = "merged nothing (it popped each key before the key's next change was queued)"
	}
	return fmt.Sprintf("order: RealFIFO: %d handler calls %s; DeltaFIFO %s", len(r.realFIFO), rf, df)
}

// table is the lesson's three columns side by side, a DeltaFIFO run of one
// key bracketed.
func (r *orderResult) table() string {
	var b strings.Builder
	const w = 28
	fmt.Fprintf(&b, "   %-*s %-*s %s\n", w, "API server (state, writes)", w, "RealFIFO: handler calls", "DeltaFIFO: handler calls")
	var marks []string
	for _, g := range groups(r.deltaFIFO) {
		for i := range g {
			switch {
			case len(g) == 1:
				marks = append(marks, "")
			case i == 0:
				marks = append(marks, " ┐")
			case i == len(g)-1:
				marks = append(marks, fmt.Sprintf(" ┘ %s: %d calls in a row", g[0].key[len(lessonNamespace)+1:], len(g)))
			default:
				marks = append(marks, " │")
			}
		}
	}
	n := max(len(r.server), len(r.realFIFO), len(r.deltaFIFO))
	at := func(cs []call, i int) string {
		if i < len(cs) {
			return cs[i].String()
		}
		return ""
	}
	for i := range n {
		mark := ""
		if i < len(marks) {
			mark = marks[i]
		}
		fmt.Fprintf(&b, "   %-*s %-*s %-*s%s\n", w, at(r.server, i), w, at(r.realFIFO, i), w, at(r.deltaFIFO, i), mark)
	}
	return strings.TrimRight(b.String(), "\n")
}
