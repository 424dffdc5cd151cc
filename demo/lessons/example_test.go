package lessons_test

import (
	"fmt"

	"github.com/informer-anatomy/informer-anatomy/demo/lessons"
)

// The lesson table, in script order: what --scenario accepts, and what the
// terminal run and the live view's script run. A new lesson is a new file,
// lesson_<name>.go, that registers itself: this example prints only the
// script's first lesson and one opt-in lesson, so that adding a lesson
// changes nothing here.
func ExampleLessons() {
	script := lessons.Lessons()
	fmt.Println("first:", script[0].Name)
	l, ok := lessons.Find("controller")
	fmt.Println("controller:", ok, l.OptIn)
	// Output:
	// first: basic
	// controller: true true
}
