//go:build workshop

package lateroot

import (
	"slices"
	"testing"

	"github.com/informer-anatomy/informer-anatomy/demo/liveview"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestPredictions(t *testing.T) {
	lv := kit.StartLiveView(t)
	lv.Synced()
	lv.Press("create-pod", 0)
	lv.Press("create-pod", 0)
	before := lv.WaitState("three pods cached, every handler done", func(st liveview.State) bool {
		return st.Pipeline.Indexer == 3 && kit.Settled(st.Pipeline) && len(st.Events) > 0 && st.Events[0].HandlerCalls == 3
	})
	seen := map[string]bool{}
	for _, e := range before.Events {
		seen[e.TraceID] = true
	}
	lv.Press("add-handler", 0)
	after := lv.WaitState("the new listener's calls and their events", func(st liveview.State) bool {
		ls := st.Pipeline.Listeners
		if len(ls) != 4 || ls[3].Calls != uint64(st.Pipeline.Indexer) || !kit.Settled(st.Pipeline) {
			return false
		}
		for _, e := range st.Events {
			if !seen[e.TraceID] && e.HandlerCalls == 0 {
				return false // a trace whose handler call has not ended yet
			}
		}
		return true
	})
	var fresh []liveview.Event
	for _, e := range after.Events {
		if !seen[e.TraceID] {
			fresh = append(fresh, e)
		}
	}
	if Rows != len(fresh) {
		t.Errorf("Rows: you predicted %d, not the number of rows \"add a handler\" added to the event list", Rows)
	}
	if moved := int(after.Pipeline.HandleDeltas - before.Pipeline.HandleDeltas); HandleDeltas != moved {
		t.Errorf("HandleDeltas: you predicted it moves by %d, not by what the box moved", HandleDeltas)
	}
	if len(fresh) == 0 {
		t.Fatalf("no new row to click")
	}
	wf := lv.Trace(fresh[0].TraceID)
	var root string
	var listeners []string
	for _, s := range wf.Spans {
		if s.ParentID == "" {
			root = s.Name
		}
		if l := s.Attrs[string(tracing.KeyListener)]; l != "" && slices.Contains([]string{"OnAdd", "OnUpdate", "OnDelete"}, s.Name) && !slices.Contains(listeners, l) {
			listeners = append(listeners, l)
		}
	}
	if Root != root {
		t.Errorf("Root: you predicted %q, not the root span of the trace of %s (a new row)", Root, fresh[0].Key)
	}
	if d := kit.DiffList(Listeners, listeners); d != "" {
		t.Errorf("Listeners: you predicted %q, not the listeners whose handler calls are in the trace of %s: %s", Listeners, fresh[0].Key, d)
	}
}
