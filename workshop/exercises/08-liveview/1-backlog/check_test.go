//go:build workshop

package backlog

import (
	"testing"

	"github.com/informer-anatomy/informer-anatomy/demo/liveview"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

const burst = 200

func TestPredictions(t *testing.T) {
	lv := kit.StartLiveView(t)
	before := lv.Synced().Pipeline
	if len(before.Listeners) != 3 {
		t.Fatalf("kit: the demo has %d listeners, not its three: has cmd/trace-demo changed?", len(before.Listeners))
	}
	lv.Press("slow", 0)
	lv.Press("burst", burst)

	// The first state the page shows with both fast handlers done.
	at := lv.WaitState("both fast handlers to make their calls for the burst", func(st liveview.State) bool {
		ls := st.Pipeline.Listeners
		return len(ls) == 3 && ls[0].Calls >= before.Listeners[0].Calls+burst && ls[1].Calls >= before.Listeners[1].Calls+burst
	}).Pipeline
	// Every box that can hold a notification, and what it held then.
	type box struct {
		box, listener string
		n             int
	}
	boxes := []box{{"queue", "", at.Queue.Depth}}
	for _, ls := range at.Listeners {
		boxes = append(boxes, box{"addCh", ls.Name, ls.AddCh}, box{"pending", ls.Name, ls.Pending})
	}
	most := boxes[0]
	for _, b := range boxes[1:] {
		if b.n > most.n {
			most = b
		}
	}
	left := int(before.Listeners[2].Calls + burst - at.Listeners[2].Calls)
	if left < burst/10 || most.n < left/2 {
		// The boxes' names and numbers would be the answer: not shown.
		t.Fatalf("inconclusive run: when the fast handlers were done, the slow handler had %d updates left and no box held most of them; run the checker again", left)
	}
	if Box != most.box {
		t.Errorf("Box: you predicted %q, not the box that held most of the slow handler's backlog when the fast handlers were done", Box)
	}
	if Listener != most.listener {
		t.Errorf("Listener: you predicted %q, not the row of the box that held most of the slow handler's backlog", Listener)
	}

	end := lv.WaitState("every handler to make its calls for the burst", func(st liveview.State) bool {
		ls := st.Pipeline.Listeners
		return kit.Settled(st.Pipeline) && len(ls) == 3 && ls[2].Calls >= before.Listeners[2].Calls+burst
	}).Pipeline
	var got [3]int
	for i := range got {
		got[i] = int(end.Listeners[i].Calls - before.Listeners[i].Calls)
	}
	if Calls != got {
		t.Errorf("Calls: you predicted %v, not the calls the three handlers made for the burst", Calls)
	}
}
