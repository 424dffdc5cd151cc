// Package result is what a trace-demo run hands back: which traces the
// closing view draws ([Showcase]) and what the run counted ([Result]).
// Ours: nothing here mirrors client-go.
//
// It sits on the demo's floor with no import from it: the lessons
// (demo/lessons), the run against a cluster (demo/cluster) and the live
// view's controls (demo/livecontrols) fill it in, and the terminal
// (demo/terminal) draws it, so that the printer does not own the lessons'
// types and a lesson does not reach into the printer for them.
package result

import (
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// Showcase is one trace the waterfall draws: the first trace of Key whose
// root matches.
type Showcase struct {
	Title string
	Key   string
	Match func(root *spancheck.Span) bool
	Last  bool   // the last matching trace instead of the first
	Step  string // the scenario that made it, shown in the heading
}

// Show is the Showcase of key's first trace whose root matches, under
// title.
func Show(title, key string, match func(*spancheck.Span) bool) Showcase {
	return Showcase{Title: title, Key: key, Match: match}
}

// RootIs matches a root span by its name and, unless event is "", its
// informer.event.type (ADDED, MODIFIED, LISTED, …).
func RootIs(name, event string) func(*spancheck.Span) bool {
	return func(r *spancheck.Span) bool {
		return r.Name == name && (event == "" || r.Attr(tracing.KeyEventType) == event)
	}
}

// Result is what a run hands to the closing view: which traces to draw,
// how many calls the main informer's handlers counted themselves (the
// summary's span counts miss the objects a trace filter left out), and the
// main informer's name, for the summary's headline.
type Result struct {
	Show         []Showcase
	HandlerCalls int64
	Informer     string
}
