package lessons

import (
	"context"
	"fmt"
	"strings"

	"github.com/informer-anatomy/informer-anatomy/demo/result"
)

// ScriptOptions are a scripted run's: an Env's, the lessons to run, and
// how much of each to print.
type ScriptOptions struct {
	Options
	// Lessons are the names of the lessons to run, in order.
	Lessons []string
	// Show says how much of lesson name to print.
	Show func(name string) Show
	// Outcome, if set, is given every lesson's outcome (tests).
	Outcome func(name string, out Outcome)
}

// RunScript is the embedded run of trace-demo without --ui: it starts an
// Env, waits for the informer to sync, runs the lessons one after another
// and, once every handler has seen the final state, stops it all. The
// result holds every lesson's showcases, the initial state's first.
func RunScript(ctx context.Context, o ScriptOptions) (result.Result, error) {
	e, err := Start(ctx, o.Options)
	if err != nil {
		return result.Result{}, err
	}
	defer e.Stop()
	o.Printer.Status("embedded API server at %s; namespace %q; queue %s; scenarios: %s", e.URL(), Namespace, e.queue, strings.Join(o.Lessons, ", "))
	res := result.Result{Informer: MainInformer}
	start := result.Show("streamed before the informer started (STREAM → Replaced)", Namespace+"/web-1", result.RootIs("ListAndWatch watchlist", "LISTED"))
	start.Step = "start"
	res.Show = append(res.Show, start)
	if err := e.WaitForSync(); err != nil {
		return result.Result{}, err
	}
	for _, name := range o.Lessons {
		if err := ctx.Err(); err != nil {
			return result.Result{}, fmt.Errorf("interrupted before %s", name)
		}
		l, ok := Find(name)
		if !ok {
			return result.Result{}, fmt.Errorf("unknown scenario %q", name)
		}
		out, err := e.RunLesson(l, o.Show(name))
		if err != nil {
			return result.Result{}, err
		}
		if o.Outcome != nil {
			o.Outcome(name, out)
		}
		res.Show = append(res.Show, out.Show...)
	}
	if err := e.handlersCaughtUp("every handler to see the final state"); err != nil {
		return result.Result{}, err
	}
	e.StopInformer()
	res.HandlerCalls = e.HandlerCalls()
	return res, nil
}

// PickShown is what a run without --verbose draws: with every scenario, the
// one waterfall a newcomer needs first (an update seen by watch, through
// all three listeners); with one scenario, that scenario's.
func PickShown(show []result.Showcase, scenario string) []result.Showcase {
	var out []result.Showcase
	for _, s := range show {
		if (scenario == "all" && s.Step == "basic" && s.Key == Namespace+"/web-1") || (scenario != "all" && s.Step == scenario) {
			out = append(out, s)
		}
	}
	if len(out) == 0 && len(show) > 0 {
		out = show[:1]
	}
	return out
}
