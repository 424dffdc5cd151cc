package lessons

import (
	"fmt"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/demo"
	"github.com/informer-anatomy/informer-anatomy/demo/result"
	"github.com/informer-anatomy/informer-anatomy/demo/terminal"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// late-handler: a handler added after sync is given every cached object as
// a synthetic add, straight into its addCh; the queue and HandleDeltas are
// not involved.
func init() {
	register(Lesson{
		Name:  "late-handler",
		Order: 70,
		Text:  func(*Env) string { return "add *demo.lateHandler after the informer has synced." },
		LookFor: "  Look for: root AddEventHandler, straight into addCh: the new handler is given every cached\n" +
			"  object as a synthetic add; the queue and HandleDeltas are not involved.",
		Run: lateHandlerLesson,
	})
}

func lateHandlerLesson(e *Env) (Outcome, error) {
	if err := e.addLate(); err != nil {
		return Outcome{}, err
	}
	return Outcome{
		Line: fmt.Sprintf("late-handler: %s was given %s, one per cached pod, each a trace of its own with root %s; the queue and HandleDeltas were not involved",
			e.lateName, terminal.Plural(int(e.late.Record().Adds()), "synthetic add"), tracing.SpanAddEventHandle),
		Show: []result.Showcase{result.Show("a handler added after sync gets synthetic adds", Namespace+"/web-1", result.RootIs(tracing.SpanAddEventHandle, ""))},
	}, nil
}

// addLate adds the late handler, with the one resync period of the run's
// handlers, and waits for its synthetic adds.
func (e *Env) addLate() error {
	// The lesson run again (the live view's script) replaces its late
	// handler rather than pile them up.
	if e.lateReg != nil {
		if err := e.informer.RemoveEventHandler(e.lateReg); err != nil {
			return err
		}
		e.late, e.lateReg = nil, nil
	}
	h := demo.NewLate()
	reg, err := e.informer.AddEventHandlerWithResyncPeriod(h, resyncPeriod)
	if err != nil {
		return err
	}
	e.late, e.lateReg, e.lateName = h, reg, "*demo.lateHandler"
	if st, err := processor.ReadStats(e.informer); err == nil && len(st.Listeners) > 0 {
		e.lateName = st.Listeners[len(st.Listeners)-1].Name // sorted by index: the newest is last
	}
	return e.handlersCaughtUp("the late handler's synthetic adds")
}
