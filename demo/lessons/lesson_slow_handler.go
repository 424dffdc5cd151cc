package lessons

import (
	"fmt"
	"strings"
	"time"

	"github.com/informer-anatomy/informer-anatomy/demo/result"
	"github.com/informer-anatomy/informer-anatomy/demo/telemetry"
	"github.com/informer-anatomy/informer-anatomy/demo/terminal"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// slowDelay is the slow handler's time per call during the lesson: long
// enough that five quick updates queue up in its ring buffer, short enough
// that a run stays within a few seconds.
const slowDelay = 3 * time.Millisecond

// slow-handler: five quick updates behind the third handler, slow for the
// lesson; they wait in its ring buffer while the other listeners are done.
func init() {
	register(Lesson{
		Name:  "slow-handler",
		Order: 40,
		Text: func(e *Env) string {
			text := "update demo/busy five times in a row; " + e.thirdName + " takes " + slowDelay.String() + " per call."
			if e.tunable {
				text += " (the lesson script makes it so for this lesson)"
			}
			return text
		},
		LookFor: "  Look for: the slow listener's pop span (informer.listener.pending > 0) grows while the\n" +
			"  other listeners finished long ago: one slow handler never delays the others or the queue.\n" +
			"  The line below gives its time per call on demo/busy.",
		Run: slowHandlerLesson,
	})
}

func slowHandlerLesson(e *Env) (Outcome, error) {
	started := time.Now()
	// The live view's tunable handler is made as slow as the scripted
	// run's for the lesson, then put back (unless a button changed it
	// meanwhile); the scripted run's is that slow already.
	prev := e.third.SetDelay(slowDelay)
	defer e.third.RestoreDelay(slowDelay, prev)
	// Left by an earlier run of the lesson (the live view's script runs it
	// again): gone, and seen gone, before it is made anew.
	if err := e.deleteIfThere(apiserver.Pods, Namespace, "busy"); err != nil {
		return Outcome{}, err
	}
	if err := e.handlersCaughtUp("demo/busy of an earlier run deleted"); err != nil {
		return Outcome{}, err
	}
	if err := e.CreatePod("busy"); err != nil {
		return Outcome{}, err
	}
	if err := e.handlersCaughtUp("demo/busy's ADDED"); err != nil {
		return Outcome{}, err
	}
	for v := range 5 {
		if err := e.UpdatePod("busy", fmt.Sprint(v+1)); err != nil {
			return Outcome{}, err
		}
	}
	show := result.Show("the last of five quick updates, behind a slow handler", Namespace+"/busy", result.RootIs("ListAndWatch watch", "MODIFIED"))
	show.Last = true
	if err := e.handlersCaughtUp("the five updates of demo/busy"); err != nil {
		return Outcome{}, err
	}
	// A handler marks demo/busy seen inside its call, and the call's span
	// ends once it has returned: caught up is not yet traced. Counted at
	// once, the line could miss the last call (5 calls, 4 OnUpdate: it did,
	// under load). So wait for the six spans where all can come: every
	// object traced (no trace filter) and the summary's span memory not
	// full; otherwise the line says what it found.
	c := e.tel.Collector
	if e.filter == nil {
		if err := e.until("the slow handler's six calls on demo/busy to end their spans", func() bool {
			adds, updates, _ := slowCalls(c, Namespace+"/busy", e.thirdName, started)
			return adds+updates >= 6 || c.Full()
		}); err != nil {
			return Outcome{}, err
		}
	}
	return Outcome{Line: slowLine(c, e.thirdName, started), Show: []result.Showcase{show}}, nil
}

// slowLine is the line after the slow-handler lesson: the slow handler's
// time per call on demo/busy, from the spans of its calls since the lesson
// began, and which calls they were.
func slowLine(c *telemetry.Collector, handler string, since time.Time) string {
	adds, updates, mean := slowCalls(c, Namespace+"/busy", handler, since)
	n := adds + updates
	if n == 0 {
		why := "not among the traced objects?"
		if c.Full() {
			why = "the summary's span memory is full: the page's waterfalls still have them"
		}
		return "slow-handler: no traced call of " + handler + " on demo/busy (" + why + ")"
	}
	return fmt.Sprintf("slow-handler: %s took %s per call on demo/busy (%s: %d OnAdd for its create, %d OnUpdate for the five updates)",
		handler, terminal.Ms(mean), terminal.Plural(n, "call"), adds, updates)
}

// slowCalls counts handler's traced OnAdd and OnUpdate calls for key that
// started at since or later (handler: its type's name, *demo.slowHandler:
// the calls it does sleep on, unlike the other handlers'), and their mean
// duration.
func slowCalls(c *telemetry.Collector, key, handler string, since time.Time) (adds, updates int, mean time.Duration) {
	spans, _ := c.Snapshot()
	sum := time.Duration(0)
	for i := range spans {
		s := &spans[i]
		if !spancheck.IsHandlerCall(s) || s.Start.Before(since) || s.Attr(tracing.KeyObjectKey) != key || !strings.HasPrefix(s.Attr(tracing.KeyListener), handler+"#") {
			continue
		}
		switch s.Name {
		case tracing.SpanOnAdd:
			adds++
		case tracing.SpanOnUpdate:
			updates++
		default:
			continue
		}
		sum += s.Duration()
	}
	if n := adds + updates; n > 0 {
		mean = sum / time.Duration(n)
	}
	return adds, updates, mean
}
