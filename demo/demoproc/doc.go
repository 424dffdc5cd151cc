// Package demoproc runs cmd/trace-demo as a separate process, the way a
// user runs it, for tests and for the workshop's checkers.
//
// Several places need the same few steps: build the binary, start
// `trace-demo --ui --ui-addr 127.0.0.1:0`, read the "live view: http://…"
// line it prints to learn the port the kernel chose, keep everything it
// writes for the error message, and end it with an interrupt as Ctrl-C
// does. This package does them once, and answers with errors, so that
// code that is not a test (workshop/kit) can use it as well as tests:
//
//   - [Build] compiles cmd/trace-demo of the module that contains the
//     current directory, once per process, into a directory of the
//     temporary directory that is kept between runs, so the go command
//     finds it up to date next time instead of linking it again.
//   - [Start] runs the live view and waits for its URL; a demo that exits
//     first, or prints no URL in time, is an error with its output rather
//     than a hang.
//   - [Proc.Stop] interrupts it and returns its exit code; whoever started
//     a demo stops it.
//   - [LockedBuffer] is an output buffer one may read while a process or
//     goroutine writes to it.
//
// Tests use it through demo/demoproc/demoproctest, which fails the test on
// an error and stops the demo when the test ends.
//
// Ours, not part of the informer stack: nothing here mirrors client-go.
package demoproc
