package lessons

import (
	"fmt"
	"slices"

	"github.com/informer-anatomy/informer-anatomy/demo/result"
)

// A Lesson is one scenario of the embedded run: what it does, what to look
// for in its waterfall, how it runs and what it reports. Each lesson is
// one file of this package (lesson_*.go) that registers it; the terminal
// run (RunScript, --scenario) and the live view's lesson script read the
// same table, so a new lesson is one new file.
type Lesson struct {
	// Name is the --scenario value.
	Name string
	// Order places it in the script.
	Order int
	// OptIn lessons run only when named (--scenario, the page's own
	// control), never as part of "all": the controller lesson adds a
	// listener, which would change the other lessons' listener names and
	// counts that their texts and the workshop give.
	OptIn bool
	// Text says what it does, in one line (always printed). It may name
	// the run's own handlers, so it is asked of the Env.
	Text func(e *Env) string
	// LookFor says what to look for in its waterfall (printed with the
	// waterfall, and by the live view's script).
	LookFor string
	// Run does it, waits until every handler has seen the effect (never a
	// fixed sleep), and reports what it did, read from this run of it (the
	// spans that started since, the handlers' own records): the live
	// view's script runs lessons again in the same process.
	Run func(e *Env) (Outcome, error)
}

// Outcome is what one run of a lesson did.
type Outcome struct {
	// Line is printed after the lesson ("" for none).
	Line string
	// Detail is printed below Line when the lesson is shown in full
	// (--verbose, or the lesson run alone): the order lesson's columns.
	Detail string
	// Show are the traces the run made that the waterfall can draw; their
	// Step is the lesson's name.
	Show []result.Showcase

	order *orderResult // the order lesson's columns, for its tests
}

var registry []Lesson

// register adds l to the table; each lesson file calls it from init.
func register(l Lesson) {
	if _, dup := Find(l.Name); dup {
		panic("demo: two lessons named " + l.Name)
	}
	registry = append(registry, l)
	slices.SortStableFunc(registry, func(a, b Lesson) int { return a.Order - b.Order })
}

// Lessons are the lessons "all" runs, in order.
func Lessons() []Lesson {
	return slices.DeleteFunc(slices.Clone(registry), func(l Lesson) bool { return l.OptIn })
}

// Names are the names of Lessons, in order; OptInNames those of the
// opt-in lessons.
func Names() []string { return names(false) }

// OptInNames are the names of the lessons that run only when named.
func OptInNames() []string { return names(true) }

func names(optIn bool) []string {
	var out []string
	for _, l := range registry {
		if l.OptIn == optIn {
			out = append(out, l.Name)
		}
	}
	return out
}

// Find returns the lesson named name.
func Find(name string) (Lesson, bool) {
	i := slices.IndexFunc(registry, func(l Lesson) bool { return l.Name == name })
	if i < 0 {
		return Lesson{}, false
	}
	return registry[i], true
}

// Show says how much of a lesson [Env.RunLesson] prints besides its line
// and its result.
type Show struct {
	LookFor bool // what to look for in its waterfall
	Detail  bool // its Outcome's Detail
}

// RunLesson prints l's line (and what to look for, if asked), runs it,
// and prints its result. The Outcome's showcases carry l's name as their
// step.
func (e *Env) RunLesson(l Lesson, show Show) (Outcome, error) {
	e.printer.Lesson(l.Name, l.Text(e))
	if show.LookFor {
		e.printer.Println(l.LookFor)
	}
	out, err := l.Run(e)
	if err != nil {
		if e.context().Err() != nil {
			return out, fmt.Errorf("interrupted during %s", l.Name)
		}
		return out, fmt.Errorf("scenario %s: %w", l.Name, err)
	}
	if out.Line != "" {
		e.printer.Status("%s", out.Line)
	}
	if show.Detail && out.Detail != "" {
		e.printer.Println(out.Detail)
	}
	for i := range out.Show {
		out.Show[i].Step = l.Name
	}
	return out, nil
}
