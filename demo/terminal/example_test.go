package terminal_test

import (
	"fmt"
	"os"

	"github.com/informer-anatomy/informer-anatomy/demo/terminal"
)

// An object's name from the API server cannot recolour the screen or fake a
// line of the demo's own: its controls are shown, not obeyed.
func ExampleSafe() {
	fmt.Println(terminal.Safe("pod \x1b[2Jweb\n· all good"))
	// Output: pod \x1b[2Jweb\n· all good
}

// A Printer clears its progress line before each line it prints; --quiet
// silences lessons and status, never warnings (they go to standard error).
func ExamplePrinter() {
	p := terminal.NewPrinter(os.Stdout, os.Stdout, false)
	p.Lesson("basic", "create demo/web-2.")
	p.Status("synced: %s", terminal.Plural(3, "pod"))
	p.Warn("reflector: %s", "connection refused\x1b[0m")
	// Output:
	// ▶ basic: create demo/web-2.
	// · synced: 3 pods
	// trace-demo: reflector: connection refused\x1b[0m
}

func ExampleShortListener() {
	fmt.Println(terminal.ShortListener("*demo.slowHandler#2"))
	fmt.Println(terminal.ShortListener("main.auditHandler#0"))
	fmt.Println(terminal.ShortListener("*cache.ResourceEventHandlerFuncs#1"))
	// Output:
	// slowHandler#2
	// auditHandler#0
	// ResourceEventHandlerFuncs#1
}
