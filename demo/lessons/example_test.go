package lessons_test

import (
	"fmt"

	"github.com/informer-anatomy/informer-anatomy/demo/lessons"
)

// The lesson table, in script order: what --scenario accepts, and what the
// terminal run and the live view's script run. A new lesson is a new file
// that registers itself here.
func ExampleLessons() {
	for _, l := range lessons.Lessons() {
		fmt.Println(l.Name)
	}
	fmt.Println("opt-in:", lessons.OptInNames())
	// Output:
	// basic
	// coalesce
	// order
	// slow-handler
	// relist
	// fallback
	// late-handler
	// resync
	// opt-in: [controller handoff]
}
