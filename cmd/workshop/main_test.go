package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tempCourse copies the module, the kit and the first two exercises (with
// their solutions) into a temporary git repository, as a participant's
// fresh clone, and returns its root and those exercises.
func tempCourse(t *testing.T) (string, []*Exercise) {
	t.Helper()
	exs, err := load("../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(exs) < 2 {
		t.Fatalf("want at least two exercises, found %d", len(exs))
	}
	exs = exs[:2]
	root := t.TempDir()
	names := []string{"go.mod", "go.sum", "chapters", "internal", "workshop/kit", "workshop/.gitignore"}
	for _, e := range exs {
		names = append(names, e.Path(), e.SolutionPath())
	}
	for _, n := range names {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, n)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := copyTree("../..", root, names); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "shipped"}} {
		git(t, root, args...)
	}
	local, err := load(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, local
}

func runOK(t *testing.T, root string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	if err := run(root, args, &out); err != nil {
		t.Fatalf("workshop %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}

func TestRunnerInATemporaryCopy(t *testing.T) {
	root, exs := tempCourse(t)
	first, second := exs[0], exs[1]

	out := runOK(t, root, "list")
	if strings.Count(out, "✗") != 2 || !strings.Contains(out, "0 of 2 solved") {
		t.Fatalf("list with nothing solved:\n%s", out)
	}

	out = runOK(t, root)
	if !strings.Contains(out, first.Name()) || !strings.Contains(out, "edit: "+filepath.ToSlash(filepath.Join(first.Path(), first.Files[0]))) {
		t.Errorf("the default command must show the first exercise and its file:\n%s", out)
	}

	for i := 1; i <= 2 && i <= len(first.Hints); i++ {
		out = runOK(t, root, "hint", first.Name())
		if !strings.Contains(out, "hint "+string(rune('0'+i))+" of") || !strings.Contains(out, first.Hints[i-1]) {
			t.Errorf("hint call %d: want hint %d:\n%s", i, i, out)
		}
	}

	stub, err := os.ReadFile(filepath.Join(root, first.Path(), first.Files[0]))
	if err != nil {
		t.Fatal(err)
	}
	if err := putSolution(root, first); err != nil {
		t.Fatal(err)
	}
	out = runOK(t, root, "list")
	if !strings.Contains(out, "✓ "+first.Dir) || !strings.Contains(out, "1 of 2 solved") {
		t.Errorf("list after the first solution:\n%s", out)
	}
	var buf bytes.Buffer
	if err := run(root, []string{"verify"}, &buf); err == nil || !strings.Contains(buf.String(), "1 of 2 solved") || !strings.Contains(buf.String(), second.Name()) {
		t.Errorf("verify with one of two solved: err %v, output:\n%s", err, buf.String())
	}
	out = runOK(t, root)
	if !strings.Contains(out, second.Name()) {
		t.Errorf("the default command must move on to %s:\n%s", second.Name(), out)
	}

	out = runOK(t, root, "solution", first.Name())
	sol, _ := os.ReadFile(filepath.Join(root, first.SolutionPath(), first.Files[0]))
	if !strings.Contains(out, string(sol)) {
		t.Errorf("solution does not print %s", first.SolutionPath())
	}

	runOK(t, root, "reset", first.Name())
	back, _ := os.ReadFile(filepath.Join(root, first.Path(), first.Files[0]))
	if !bytes.Equal(back, stub) {
		t.Errorf("reset did not bring the stub back")
	}
	if out := runOK(t, root, "list"); !strings.Contains(out, "0 of 2 solved") {
		t.Errorf("list after reset:\n%s", out)
	}

	// A participant who committed their answer still gets the stub back:
	// reset reads the branch the checkout tracks, not HEAD.
	for _, args := range [][]string{{"branch", "-q", "course"}, {"branch", "-q", "-u", "course"}} {
		git(t, root, args...)
	}
	if err := putSolution(root, first); err != nil {
		t.Fatal(err)
	}
	git(t, root, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-q", "-a", "-m", "my answer")
	if out := runOK(t, root, "reset", first.Name()); !strings.Contains(out, "from git @{upstream}") {
		t.Errorf("reset with an upstream branch:\n%s", out)
	}
	if back, _ := os.ReadFile(filepath.Join(root, first.Path(), first.Files[0])); !bytes.Equal(back, stub) {
		t.Errorf("reset after a commit of the answer did not bring the stub back")
	}

	// A participant's compile error is reported as such, with the
	// compiler's message naming the file.
	broken := filepath.Join(root, first.Path(), first.Files[0])
	if err := os.WriteFile(broken, append(stub, []byte("\nfunc broken() { undefinedThing() }\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	out = runOK(t, root)
	if !strings.Contains(out, "does not compile") || !strings.Contains(out, "undefinedThing") {
		t.Errorf("a compile error must be shown as one:\n%s", out)
	}
	runOK(t, root, "reset", first.Name())

	for _, e := range exs {
		if err := putSolution(root, e); err != nil {
			t.Fatal(err)
		}
	}
	if out := runOK(t, root, "verify"); !strings.Contains(out, "2 of 2 solved") {
		t.Errorf("verify with everything solved:\n%s", out)
	}

	// A chapter that does not compile (another file being edited) is
	// named as the culprit, not the participant's file.
	chapterFile := filepath.Join(root, "chapters", "01-store", "doc.go")
	doc, err := os.ReadFile(chapterFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(chapterFile, append(doc, []byte("\nvar brokenOnPurpose = undefinedInChapter\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	out = runOK(t, root)
	if !strings.Contains(out, "chapters/01-store, which the exercise imports") || !strings.Contains(out, "undefinedInChapter") {
		t.Errorf("a broken chapter must be named:\n%s", out)
	}
}

func TestFindAcceptsShortNamesAndRefusesAmbiguousOnes(t *testing.T) {
	exs := []*Exercise{{Chapter: "01-store", Dir: "1-bynode"}, {Chapter: "04-deltafifo", Dir: "1-pops"}, {Chapter: "04-realfifo", Dir: "1-pops"}}
	for _, name := range []string{"01-store/1-bynode", "01-store/bynode", "bynode", "1-bynode", "workshop/exercises/01-store/1-bynode/"} {
		if e, err := find(exs, name); err != nil || e != exs[0] {
			t.Errorf("find(%q) = %v, %v", name, e, err)
		}
	}
	if _, err := find(exs, "pops"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("find(pops) must be ambiguous, got %v", err)
	}
	if e, err := find(exs, "04-realfifo/pops"); err != nil || e != exs[2] {
		t.Errorf("find(04-realfifo/pops) = %v, %v", e, err)
	}
}

func TestCutTestKeepsTheCheckersWordsOnly(t *testing.T) {
	got := cutTest([]string{"=== RUN   TestX", "    check_test.go:12: want 1, got 2", "        more detail", "--- FAIL: TestX (0.00s)", "FAIL", "exit status 1", "FAIL\tpkg\t0.1s"})
	want := []string{"want 1, got 2", "more detail"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEveryPractisesLineNamesARealDocSection(t *testing.T) {
	exs, err := load("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range exs {
		if p := checkPractises("../..", e); p != "" {
			t.Errorf("%s: %s", e.Name(), p)
		}
	}
	if p := checkPractises("../..", &Exercise{Practises: `docs/01-store.md, "No such section"`}); p == "" {
		t.Errorf("a missing section must be reported")
	}
}

func TestWaitForChangeSeesASave(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "exercise.go")
	if err := os.WriteFile(f, []byte("package x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { waitForChange(dir); close(done) }()
	select {
	case <-done:
		t.Fatal("waitForChange returned before anything changed")
	case <-time.After(700 * time.Millisecond):
	}
	if err := os.WriteFile(f, []byte("package x\n\n// saved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("waitForChange did not notice the save")
	}
}

// By default the runner asks for the exercises that need nothing; --browser
// adds those that need a browser (the live view's), --all those that need
// a cluster too.
func TestIncludedFollowsTheNeedsFlags(t *testing.T) {
	exs := []*Exercise{{Dir: "1-a", Needs: "none"}, {Dir: "2-b", Needs: "cluster"}, {Dir: "3-c", Needs: "browser"}}
	names := func(needs []string) string {
		var out []string
		for _, e := range included(exs, needs) {
			out = append(out, e.Dir)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		needs []string
		want  string
	}{
		{nil, "1-a"},
		{[]string{"browser"}, "1-a 3-c"},
		{[]string{"cluster", "browser"}, "1-a 2-b 3-c"},
	} {
		if got := names(c.needs); got != c.want {
			t.Errorf("included with %v: %q, want %q", c.needs, got, c.want)
		}
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}
