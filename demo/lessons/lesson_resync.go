package lessons

import (
	"fmt"

	"github.com/informer-anatomy/informer-anatomy/demo/result"
	"github.com/informer-anatomy/informer-anatomy/demo/terminal"
)

// resync: only the handler that asked for a resync (the late one) gets
// Sync updates; the others asked for none.
func init() {
	register(Lesson{
		Name:  "resync",
		Order: 80,
		Text: func(*Env) string {
			return "the late handler asked for a " + resyncPeriod.String() + " resync; the others asked for none."
		},
		LookFor: "  Look for: root \"ListAndWatch resync\" (Sync delta) reaching OnUpdate of the late handler only.",
		Run:     resync,
	})
}

func resync(e *Env) (Outcome, error) {
	// Count from a clean start. A relist just before (the fallback
	// lesson's LIST) hands the cached objects again as updates with their
	// resourceVersion unchanged, which is what a resync is to a handler,
	// to every handler still marked as syncing (each is, until the first
	// resync check: chapter 5's listeners map); the slow handler may still
	// be working through them, and they were counted here as this
	// lesson's ("the handlers that asked for none got 1"). One write,
	// which reaches every handler after whatever was distributed before
	// it, settles them first.
	if err := e.UpdatePod("web-1", "resync"); err != nil {
		return Outcome{}, err
	}
	if err := e.handlersCaughtUp("demo/web-1's MODIFIED, before the resync lesson counts"); err != nil {
		return Outcome{}, err
	}
	before := e.othersResynced()
	if e.late == nil {
		if err := e.addLate(); err != nil {
			return Outcome{}, err
		}
	}
	if err := e.until("demo/web-1's resync to reach the late handler", func() bool {
		return e.late.Record().WasResynced(Namespace + "/web-1")
	}); err != nil {
		return Outcome{}, err
	}
	out := Outcome{Show: []result.Showcase{result.Show("resync: the cache's copy handed again to the handler that asked", Namespace+"/web-1", result.RootIs("ListAndWatch resync", "RESYNC"))}}
	out.Line = fmt.Sprintf("resync: %s got %s so far (OnUpdate with the cached object, resourceVersion unchanged: root \"ListAndWatch resync\"), about one per cached pod every %v",
		e.lateName, terminal.Plural(int(e.late.Record().Resyncs()), "resync call"), resyncPeriod)
	if others := e.othersResynced() - before; others > 0 {
		out.Line += fmt.Sprintf("; the handlers that asked for none got %d during the lesson", others)
	} else {
		out.Line += "; the handlers that asked for none got none"
	}
	return out, nil
}

// othersResynced sums the resync calls (an update with an unchanged
// resourceVersion) of the handlers that asked for no resync.
func (e *Env) othersResynced() int64 {
	var n int64
	for _, h := range e.handlers {
		n += h.Record().Resyncs()
	}
	return n
}
