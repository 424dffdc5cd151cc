//go:build workshop

package onetraced

import (
	"testing"

	"github.com/informer-anatomy/informer-anatomy/demo/liveview"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

const burst = 50

func TestPredictions(t *testing.T) {
	lv := kit.StartLiveView(t, "--trace-keys", "demo/web-1")
	before := lv.Synced()
	seen := map[string]bool{}
	for _, e := range before.Events {
		seen[e.TraceID] = true
	}
	lv.Press("fast", 0) // the counters settle sooner; nothing else changes
	lv.Press("burst", burst)
	lv.Press("create-pod", 0)
	after := lv.WaitState("the burst and the new pod handled by every handler", func(st liveview.State) bool {
		p := st.Pipeline
		if p.Indexer != before.Pipeline.Indexer+1 || !kit.Settled(p) {
			return false
		}
		for i, ls := range p.Listeners {
			if ls.Calls != p.HandleDeltas || ls.Calls < before.Pipeline.Listeners[i].Calls+burst+1 {
				return false
			}
		}
		for _, e := range st.Events {
			if !seen[e.TraceID] && e.HandlerCalls < 3 {
				return false // a traced event not yet through every handler
			}
		}
		return true
	})
	rows := map[string]int{}
	for _, e := range after.Events {
		if !seen[e.TraceID] {
			rows[e.Key]++
		}
	}
	if WebRows != rows["demo/web-1"] {
		t.Errorf("WebRows: you predicted %d, not the number of new rows of demo/web-1 in the event list", WebRows)
	}
	if LiveRows != rows["demo/live-1"] {
		t.Errorf("LiveRows: you predicted %d, not the number of rows of demo/live-1 in the event list", LiveRows)
	}
	if moved := int(after.Pipeline.HandleDeltas - before.Pipeline.HandleDeltas); HandleDeltas != moved {
		t.Errorf("HandleDeltas: you predicted it moves by %d, not by what the box moved", HandleDeltas)
	}
	// One message, naming no listener: the listeners' names are another
	// exercise's answer (08-liveview/1-backlog asks which row grows).
	for i, ls := range after.Pipeline.Listeners {
		if moved := int(ls.Calls - before.Pipeline.Listeners[i].Calls); Calls != moved {
			t.Errorf("Calls: you predicted %d, not by what every handler's calls moved", Calls)
			break
		}
	}
}
