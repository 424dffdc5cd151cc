// Package demoproc runs cmd/trace-demo as a separate process, the way a
// user runs it, for tests and for the workshop's checkers.
//
// Several places need the same few steps: build the binary, start
// `trace-demo --ui --ui-addr 127.0.0.1:0`, read the "live view: http://…"
// line it prints to learn the port the kernel chose, keep everything it
// writes for the failure message, and end it with an interrupt as Ctrl-C
// does. This package does them once:
//
//   - [Build] compiles cmd/trace-demo of the module the test runs in, once
//     per test process, into a directory of the temporary directory that is
//     kept between runs, so the go command finds it up to date next time
//     instead of linking it again.
//   - [Start] runs the live view and waits for its URL; a demo that exits
//     first, or prints no URL in time, fails the test with its output
//     rather than hanging it.
//   - [Proc.Stop] interrupts it and returns its exit code; the test's
//     cleanup stops a demo that the test did not.
//   - [LockedBuffer] is an output buffer a test may read while a process or
//     goroutine writes to it.
//
// It is test support, not part of the informer stack: nothing here mirrors
// client-go.
package demoproc
