package lessons

import (
	"github.com/informer-anatomy/informer-anatomy/demo/result"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

// basic: a create, an update and a delete, each seen by the watch and
// handed to every handler.
func init() {
	register(Lesson{
		Name:  "basic",
		Order: 10,
		Text:  func(*Env) string { return "create demo/web-2, update demo/web-1, delete demo/web-2." },
		LookFor: "  Look for: one trace per change, from \"ListAndWatch watch\" to each handler's On* span;\n" +
			"  RealFIFO.queued (DeltaFIFO.queued with --queue deltafifo) is the time in the queue,\n" +
			"  addCh/pop/nextCh the time inside each listener.",
		Run: basic,
	})
}

func basic(e *Env) (Outcome, error) {
	// An earlier run of the script stopped mid-lesson may have left it.
	if err := e.deleteIfThere(apiserver.Pods, Namespace, "web-2"); err != nil {
		return Outcome{}, err
	}
	if err := e.CreatePod("web-2"); err != nil {
		return Outcome{}, err
	}
	if err := e.handlersCaughtUp("demo/web-2's ADDED"); err != nil {
		return Outcome{}, err
	}
	if err := e.UpdatePod("web-1", "1"); err != nil {
		return Outcome{}, err
	}
	if err := e.handlersCaughtUp("demo/web-1's MODIFIED"); err != nil {
		return Outcome{}, err
	}
	if err := e.DeletePod("web-2"); err != nil {
		return Outcome{}, err
	}
	ns := Namespace + "/"
	out := Outcome{Show: []result.Showcase{
		result.Show("created while watching (ADDED)", ns+"web-2", result.RootIs("ListAndWatch watch", "ADDED")),
		result.Show("updated (MODIFIED)", ns+"web-1", result.RootIs("ListAndWatch watch", "MODIFIED")),
		result.Show("deleted (DELETED)", ns+"web-2", result.RootIs("ListAndWatch watch", "DELETED")),
	}}
	return out, e.handlersCaughtUp("demo/web-2's DELETED")
}
