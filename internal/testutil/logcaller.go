package testutil

import (
	"bytes"
	"context"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
)

// LogLine is one line of klog's text logger as [CaptureLogs] reads it: the
// message, and the source location the logger was told it came from (its
// header's file:line; [CallerLines] makes the line relative to the call
// under test).
//
// Ours: a test helper.
type LogLine struct {
	Msg  string
	File string
	Line int
	// Text is the line after its header: the quoted message and its
	// key/value pairs.
	Text string
}

// syncWriter is the logger's output; lines are written whole.
type syncWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// klogHeader matches klog's text header: "I1126 12:00:00.000000   123 file.go:45] "msg"".
var klogHeader = regexp.MustCompile(`^\S+ \S+ +\d+ ([^:]+):(\d+)\] ("([^"]*)".*)$`)

// CaptureLogs runs call with a ctx whose logger (klog's textlogger at
// verbosity 0) writes to a buffer, and returns the lines it logged: each
// message with the file (base name) and line its header names.
//
// Ours: a test helper.
func CaptureLogs(t testing.TB, call func(ctx context.Context)) []LogLine {
	t.Helper()
	out := &syncWriter{}
	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(out)))
	call(klog.NewContext(context.Background(), logger))
	var lines []LogLine
	for _, text := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if text == "" {
			continue
		}
		m := klogHeader.FindStringSubmatch(text)
		require.NotNil(t, m, "a log line with klog's header: %q", text)
		n, err := strconv.Atoi(m[2])
		require.NoError(t, err)
		lines = append(lines, LogLine{Msg: m[4], File: m[1], Line: n, Text: m[3]})
	}
	return lines
}

// CallerLines runs call as [CaptureLogs] does and returns the lines logged.
// call returns the place of the call whose logging is checked ([Here] on
// the line before it, plus one): every line must name that file, and its
// Line is made relative to that line, so 0 means "names the call", as
// client-go's helpers that use logr's WithCallStackHelper do.
//
// Ours: a test helper.
func CallerLines(t testing.TB, call func(ctx context.Context) (file string, line int)) []LogLine {
	t.Helper()
	var file string
	var line int
	lines := CaptureLogs(t, func(ctx context.Context) { file, line = call(ctx) })
	for i := range lines {
		require.Equal(t, file, lines[i].File, "%q is reported at the caller's file", lines[i].Msg)
		lines[i].Line -= line
	}
	return lines
}

// Here is the base name of the file and the line of its caller (skip 0),
// or of a caller further up.
//
// Ours: a test helper.
func Here(skip int) (file string, line int) {
	_, path, line, _ := runtime.Caller(skip + 1)
	return path[strings.LastIndexByte(path, '/')+1:], line
}

// Checker is a DoneChecker of a channel: it has the methods of client-go's
// cache.DoneChecker (k8s.io/client-go/tools/cache, synctrack.go) and of
// chapter 4's, which mirrors it.
//
// Ours: a test helper.
type Checker struct {
	name string
	done <-chan struct{}
}

// NewChecker returns a [Checker] called name, done once done is closed.
//
// Ours: a test helper.
func NewChecker(name string, done <-chan struct{}) Checker { return Checker{name, done} }

// Name is the name the checker was given.
func (c Checker) Name() string { return c.name }

// Done is the checker's channel.
func (c Checker) Done() <-chan struct{} { return c.done }

// WaitForLines calls waitFor (client-go's cache.WaitFor or one of ours) once,
// with what "sync", one checker that is done and one that never is, on a
// context that is already canceled, and returns what it logged as
// [CallerLines] does: a Line of 0 names the line that called waitFor. Such a
// wait logs "Waiting", "Done waiting" for the done checker and "Timed out
// waiting" for the other.
//
// C is waitFor's checker interface; a [Checker] must satisfy it (a C that it
// does not satisfy panics).
//
// Ours: a test helper; the call is made here, so the lines of two waitFors
// compare as they are.
func WaitForLines[C any](t testing.TB, waitFor func(ctx context.Context, what string, checkers ...C) bool) []LogLine {
	t.Helper()
	closed := make(chan struct{})
	close(closed)
	done := any(NewChecker("done", closed)).(C)
	never := any(NewChecker("never", make(chan struct{}))).(C)
	return CallerLines(t, func(ctx context.Context) (string, int) {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		file, line := Here(0)
		waitFor(ctx, "sync", done, never)
		return file, line + 1
	})
}
