package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/demo/terminal"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
)

// Several tests assert on the same kind of run (the default run, one
// lesson alone): each such run is made once per test binary and shared,
// since a run costs seconds under -race and what one test reads of it
// changes nothing another reads. A test that needs a run of its own (a
// Ctrl-C, a fault, other flags) still makes one.

// sharedRun is one shared run: its output, its analysed spans (hooks.report)
// and, with --out, the file its spans were written to.
type sharedRun struct {
	once sync.Once
	r    runResult
	rep  *terminal.Report
	out  string
	// left is what the default run left in its working directory.
	left []os.DirEntry
	err  error
}

var (
	sharedMu   sync.Mutex
	sharedRuns = map[string]*sharedRun{}
	// sharedDir holds the shared runs' span files and working directory;
	// TestMain removes it.
	sharedDir string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "trace-demo-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sharedDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func shared(key string) *sharedRun {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	s := sharedRuns[key]
	if s == nil {
		s = &sharedRun{}
		sharedRuns[key] = s
	}
	return s
}

// scenarioRun is the shared run of one lesson alone (--scenario name),
// its spans written to a file (--out).
func scenarioRun(t *testing.T, name string) *sharedRun {
	t.Helper()
	return runToFile(t, "scenario "+name, name+".json", "--scenario", name)
}

// defaultRun is the shared run a newcomer starts (no flags), made in an
// empty working directory of its own; left is what it wrote there.
func defaultRun(t *testing.T) *sharedRun {
	t.Helper()
	s := shared("default")
	s.once.Do(func() {
		// The package's tests do not run in parallel (t.Chdir would
		// refuse), so the process's directory may change for this run;
		// the test that happens to make it need not be the one that reads
		// left.
		wd, err := os.Getwd()
		if err != nil {
			s.err = err
			return
		}
		dir := filepath.Join(sharedDir, "default-run")
		if s.err = os.Mkdir(dir, 0o755); s.err != nil {
			return
		}
		if s.err = os.Chdir(dir); s.err != nil {
			return
		}
		defer func() { _ = os.Chdir(wd) }()
		var h hooks
		h.report = func(_ *options, r *terminal.Report) { s.rep = r }
		s.r = runDemoWith(t, h, context.Background())
		s.left, s.err = os.ReadDir(dir)
	})
	require.NoError(t, s.err)
	require.Equal(t, 0, s.r.code, s.r.stderr)
	require.NotNil(t, s.rep)
	return s
}

// verboseRun is the shared whole run with --verbose and its spans written
// to a file.
func verboseRun(t *testing.T) *sharedRun {
	t.Helper()
	return runToFile(t, "verbose", "verbose.json", "--verbose")
}

// runToFile is the shared run key: trace-demo with args and --out
// sharedDir/file, made once; it must exit 0 and report its spans.
func runToFile(t *testing.T, key, file string, args ...string) *sharedRun {
	t.Helper()
	s := shared(key)
	s.once.Do(func() {
		s.out = filepath.Join(sharedDir, file)
		var h hooks
		h.report = func(_ *options, r *terminal.Report) { s.rep = r }
		s.r = runDemoWith(t, h, context.Background(), append(args, "--out", s.out)...)
	})
	require.Equal(t, 0, s.r.code, "%s: stderr: %s\nstdout: %s", strings.Join(args, " "), s.r.stderr, s.r.stdout)
	require.NotNil(t, s.rep)
	return s
}

// runShared is the shared run key: trace-demo with args (no file), made
// once; it must exit 0 and report its spans.
func runShared(t *testing.T, key string, args ...string) *sharedRun {
	t.Helper()
	s := shared(key)
	s.once.Do(func() {
		var h hooks
		h.report = func(_ *options, r *terminal.Report) { s.rep = r }
		s.r = runDemoWith(t, h, context.Background(), args...)
	})
	require.Equal(t, 0, s.r.code, "%s: stderr: %s\nstdout: %s", strings.Join(args, " "), s.r.stderr, s.r.stdout)
	require.NotNil(t, s.rep)
	return s
}

// readSpans reads the spans a run wrote to path (--out, the stdouttrace
// exporter's JSON).
func readSpans(t *testing.T, path string) []spancheck.Span {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	spans, err := spancheck.ReadStdoutTrace(f)
	require.NoError(t, err)
	return spans
}
