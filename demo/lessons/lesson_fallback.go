package lessons

import (
	"fmt"

	"github.com/informer-anatomy/informer-anatomy/demo/result"
	"github.com/informer-anatomy/informer-anatomy/liveprobe"
)

// fallback: the API server refuses streams (422 Invalid, as a
// kube-apiserver whose WatchList feature is off) and a relist is forced:
// the reflector falls back to LIST, then WATCH, and its requests are
// printed.
func init() {
	register(Lesson{
		Name:  "fallback",
		Order: 60,
		Text: func(*Env) string {
			return "the API server stops streaming (as one whose WatchList feature is off), then a forced relist."
		},
		LookFor: "  Look for: the relist's stream is refused with 422 Invalid, and the reflector falls back to the\n" +
			"  classic LIST, then WATCH (the line below lists its requests); the objects arrive as \"ListAndWatch list\"\n" +
			"  roots. In a trace viewer the cycle span Reflector.ListAndWatch holds a failed Reflector.watchlist,\n" +
			"  a watchlist.fallback event with the reason, then Reflector.list. The server streams again afterwards.",
		Run: fallback,
	})
}

// fallback switches streaming off on the API server (as a
// kube-apiserver whose WatchList feature is off), forces a relist, and
// waits until the reflector has fallen back: its stream refused with 422
// Invalid, a LIST, then a WATCH. The server streams again afterwards.
func fallback(e *Env) (Outcome, error) {
	// A change on the open watch first: a watch closed within a second of
	// its start with no event is a "very short watch", which the reflector
	// answers without the rewatch this lesson wants to show refused.
	if err := e.UpdatePod("web-1", "fallback"); err != nil {
		return Outcome{}, err
	}
	if err := e.handlersCaughtUp("demo/web-1's MODIFIED"); err != nil {
		return Outcome{}, err
	}
	since := e.requestsSent()
	e.srv.SetWatchListEnabled(false)
	defer e.srv.SetWatchListEnabled(true)
	if err := e.ForceRelist(); err != nil {
		return Outcome{}, err
	}
	if err := e.untilRelisted("the reflector to fall back from the refused stream to LIST, then WATCH", func() bool {
		reqs, _ := e.requestsAfter(since)
		return fellBack(reqs) && e.probe.State().Phase == liveprobe.VerbWatch
	}); err != nil {
		return Outcome{}, fmt.Errorf("%w; %s", err, e.requestsSince(since))
	}
	out := Outcome{Line: "fallback: " + e.requestsSince(since)}
	show := result.Show("listed after the refused stream (STREAM 422 → LIST → Replaced)", Namespace+"/web-1", result.RootIs("ListAndWatch list", "LISTED"))
	show.Last = true
	out.Show = append(out.Show, show)
	return out, e.handlersCaughtUp("the fallback's list to reach every handler")
}
