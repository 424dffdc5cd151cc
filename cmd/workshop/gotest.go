package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

// Result is what one exercise's checker said.
type Result struct {
	Pass        bool
	BuildFailed bool     // the package or its checker did not compile
	Output      []string // cut to what the participant needs
}

// testEvent is one line of `go test -json` (cmd/test2json).
type testEvent struct {
	Action      string
	Package     string
	ImportPath  string
	Test        string
	Output      string
	FailedBuild string
}

// checkTags is the build tag that switches the checkers on.
const checkTags = "workshop"

// runCheckers runs the checkers of exs in one `go test` (one build, many
// test binaries, run in parallel by the go command) and returns each one's
// result by import path. extra are more go test flags (e.g. -count=1).
func runCheckers(root string, exs []*Exercise, extra ...string) (map[string]*Result, error) {
	if len(exs) == 0 {
		return map[string]*Result{}, nil
	}
	args := append([]string{"test", "-tags", checkTags, "-json", "-timeout", "2m"}, extra...)
	for _, e := range exs {
		args = append(args, "./"+strings.ReplaceAll(e.Path(), "\\", "/"))
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot run go: %w", err)
	}
	results := map[string]*Result{}
	raw := map[string][]string{}
	build := map[string][]string{}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev testEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch ev.Action {
		case "build-output":
			p := strings.SplitN(ev.ImportPath, " ", 2)[0]
			build[p] = append(build[p], strings.TrimRight(ev.Output, "\n"))
		case "output":
			raw[ev.Package] = append(raw[ev.Package], strings.TrimRight(ev.Output, "\n"))
		case "pass", "fail", "skip":
			if ev.Test != "" {
				continue
			}
			r := &Result{Pass: ev.Action == "pass", BuildFailed: ev.FailedBuild != ""}
			if r.BuildFailed {
				// FailedBuild names the package that did not compile:
				// the exercise, or a chapter it imports.
				failed := strings.SplitN(ev.FailedBuild, " ", 2)[0]
				r.Output = cutBuild(build[failed])
				if len(r.Output) == 0 {
					r.Output = cutBuild(build[ev.Package])
				}
				if failed != ev.Package {
					r.Output = append([]string{"(in " + failed + ", which the exercise imports)"}, r.Output...)
				}
			} else if !r.Pass {
				r.Output = cutTest(raw[ev.Package])
			}
			results[ev.Package] = r
		}
	}
	_, _ = io.Copy(io.Discard, stdout)
	waitErr := cmd.Wait()
	for _, e := range exs {
		if _, ok := results[e.ImportPath()]; !ok {
			// go test could not even start on it (e.g. a syntax error
			// in go.mod): report what it said rather than a silent ✗.
			results[e.ImportPath()] = &Result{BuildFailed: true, Output: cutBuild(strings.Split(strings.TrimSpace(stderr.String()), "\n"))}
		}
	}
	if len(results) == 0 && waitErr != nil {
		return nil, fmt.Errorf("go test: %v\n%s", waitErr, stderr.String())
	}
	return results, nil
}

var testLine = regexp.MustCompile(`^\s+\w+_test\.go:\d+: ?(.*)$`)

// cutTest keeps the checker's own messages (t.Error text without the file
// and line of the checker, which the participant does not edit) and any
// panic, and drops go test's framing.
func cutTest(lines []string) []string {
	var out []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case t == "", t == "PASS", t == "FAIL", strings.HasPrefix(t, "=== "), strings.HasPrefix(t, "--- "),
			strings.HasPrefix(t, "ok "), strings.HasPrefix(t, "FAIL\t"), strings.HasPrefix(t, "exit status"):
			continue
		}
		if m := testLine.FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
			continue
		}
		out = append(out, strings.TrimPrefix(strings.TrimPrefix(l, "        "), "    "))
	}
	return limit(out, 40)
}

// cutBuild keeps the compiler's messages.
func cutBuild(lines []string) []string {
	var out []string
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "FAIL") {
			out = append(out, t)
		}
	}
	return limit(out, 20)
}

func limit(lines []string, n int) []string {
	if len(lines) > n {
		return append(lines[:n:n], fmt.Sprintf("… (%d more lines; run the go test line below to see all)", len(lines)-n))
	}
	return lines
}

// goCommand is the go test line that runs one checker by hand.
func goCommand(e *Exercise) string {
	return fmt.Sprintf("go test -tags %s -count=1 -v ./%s", checkTags, strings.ReplaceAll(e.Path(), "\\", "/"))
}

// fileExists reports whether path exists.
func fileExists(path string) bool { _, err := os.Stat(path); return err == nil }
