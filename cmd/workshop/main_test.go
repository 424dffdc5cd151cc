package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	root := t.TempDir()
	local, err := makeCourse(root, exs[:2])
	if err != nil {
		t.Fatal(err)
	}
	return root, local
}

// courseOf copies the exercise named name (with its solution) into a
// temporary course of its own, as tempCourse does, and returns the course's
// root and the exercise as loaded there.
func courseOf(t *testing.T, name string) (string, *Exercise) {
	t.Helper()
	all, err := load("../..")
	if err != nil {
		t.Fatal(err)
	}
	e, err := find(all, name)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	local, err := makeCourse(root, []*Exercise{e})
	if err != nil {
		t.Fatal(err)
	}
	return root, local[0]
}

// makeCourse copies what exs need into root, a new git repository, and
// commits it as shipped.
func makeCourse(root string, exs []*Exercise) ([]*Exercise, error) {
	names := []string{"go.mod", "go.sum", "chapters", "demo", "dropin", "internal", "liveprobe", "workshop/kit", "workshop/.gitignore"}
	for _, e := range exs {
		names = append(names, e.Path(), e.SolutionPath())
	}
	for _, n := range names {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, n)), 0o755); err != nil {
			return nil, err
		}
	}
	if err := copyTree("../..", root, names); err != nil {
		return nil, err
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "shipped"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("git %v: %v\n%s", args, err, out)
		}
	}
	return load(root)
}

// The shared course: one temporary copy for the runner's tests that need
// the same few exercises, so that the chapters and the kit are compiled
// for it once (a copy elsewhere is compiled anew). Tests using it run one
// after another and leave it as shipped.
var shared struct {
	once sync.Once
	dir  string
	root string
	exs  map[string]*Exercise
	err  error
}

var sharedNames = []string{"01-store/1-bynode", "01-store/2-configmaps", "01-store/3-inplace", "02-lister/4-freshness", "05-processor/5-pop-loop"}

func TestMain(m *testing.M) {
	// Every test works in a temporary copy of the course, as the selfcheck
	// does: one build cache for all of them (copyFlags).
	inACopy()
	dir, err := os.MkdirTemp("", "workshop-checkers-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sharedBinaries = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// sharedCourse returns the shared course's root and its exercises by
// name, and puts it back as shipped when t ends.
func sharedCourse(t *testing.T) (string, map[string]*Exercise) {
	t.Helper()
	shared.once.Do(func() {
		all, err := load("../..")
		if err != nil {
			shared.err = err
			return
		}
		var picked []*Exercise
		for _, n := range sharedNames {
			e, err := find(all, n)
			if err != nil {
				shared.err = err
				return
			}
			picked = append(picked, e)
		}
		if shared.dir, shared.err = os.MkdirTemp("", "workshop-test-"); shared.err != nil {
			return
		}
		shared.root = filepath.Join(shared.dir, "course")
		local, err := makeCourse(shared.root, picked)
		shared.err = err
		shared.exs = map[string]*Exercise{}
		for _, e := range local {
			shared.exs[e.Name()] = e
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	t.Cleanup(func() {
		git(t, shared.root, "checkout", "-q", "--", ".")
		git(t, shared.root, "clean", "-fdq", "--", "workshop/exercises")
		_ = os.RemoveAll(filepath.Join(shared.root, "workshop", ".backup"))
		_ = os.Remove(progressPath(shared.root))
	})
	return shared.root, shared.exs
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

// A checker's message is one finding, shown whole: 07-controller/1's
// names two fields, and the runner once cut it after 300 characters, so
// that what was shown spoke of Slow and the cut part of OthersFirst, the
// one that was wrong. A message too long to show (a huge prediction
// quoted) is cut after a sentence, never inside one.
func TestACheckersMessageIsNeverCutMidSentence(t *testing.T) {
	const msg = `your findings do not match the OnAdd spans: Slow must be the informer.listener value of the listener whose OnAdd spans took longest in total, exactly as the spans carry it (you wrote "github.com/informer-anatomy/informer-anatomy/workshop/kit.Recorder#2"), and OthersFirst what their start and end times show; see hint 1`
	got := cutTest([]string{"=== RUN   TestFindings", "    check_test.go:45: " + msg, "--- FAIL: TestFindings (0.00s)", "FAIL"})
	if len(got) != 1 || got[0] != msg {
		t.Errorf("07-controller/1's message, shown:\n%q\nwant it whole:\n%q", got, msg)
	}

	huge := "Calls: you predicted a list that is not what the handler got. You wrote " + strings.Repeat(`"add default/p" `, 400) + "and that is too long to read."
	got = cutTest([]string{"    check_test.go:12: " + huge})
	if len(got) != 1 || !strings.HasPrefix(got[0], "Calls: you predicted a list that is not what the handler got. … (the rest of this message,") {
		t.Errorf("a message too long to show must be cut after a sentence:\n%.300q", got)
	}
	c := &collector{}
	c.add("    check_test.go:12: " + huge + "\n")
	if _, messages, _ := c.result(); len(messages) != 1 || messages[0] != huge {
		t.Errorf("the selfcheck reads a checker's messages whole, not as shown")
	}

	// What the answer printed is cut at a word's end.
	printed := strings.Repeat("word ", 100)
	got = cutTest([]string{printed})
	if len(got) != 1 || !strings.HasSuffix(strings.SplitN(got[0], " …", 2)[0], "word") {
		t.Errorf("an answer's long line, cut: %q", got)
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

// write replaces e's edited file under root with src.
func write(t *testing.T, root string, e *Exercise, src string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, e.Path(), e.Files[0]), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// answer replaces what follows the package doc comment of e's edited file
// with src (which starts with the package clause), as a participant's
// answer does: the task stays.
func answer(t *testing.T, root string, e *Exercise, src string) {
	t.Helper()
	path := filepath.Join(root, e.Path(), e.Files[0])
	stub, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, _, ok := strings.Cut(string(stub), "\npackage ")
	if !ok {
		t.Fatalf("%s has no package clause", path)
	}
	write(t, root, e, doc+"\n"+src)
}

// runErr runs the runner and returns its output and error.
func runErr(root string, args ...string) (string, error) {
	var out bytes.Buffer
	err := run(root, args, &out)
	return out.String(), err
}

// noDump fails t if out holds a goroutine dump: a participant must see the
// checker's message, not go test's stacks.
func noDump(t *testing.T, out string) {
	t.Helper()
	if strings.Contains(out, "goroutine ") || strings.Contains(out, "[running]") {
		t.Errorf("the output holds a goroutine dump:\n%s", out)
	}
}

func TestVerifyNameChecksThatExerciseOnly(t *testing.T) {
	root, ex := sharedCourse(t)
	bynode, configmaps := ex["01-store/1-bynode"], ex["01-store/2-configmaps"]
	if err := putSolution(root, configmaps); err != nil {
		t.Fatal(err)
	}
	out := runOK(t, root, "verify", "01-store/2-configmaps")
	if !strings.Contains(out, "1 of 1 solved") || strings.Contains(out, bynode.Name()) {
		t.Errorf("verify of a solved exercise, the other one unsolved:\n%s", out)
	}
	out, err := runErr(root, "verify", "bynode")
	if err == nil || !strings.Contains(out, "0 of 1 solved") || !strings.Contains(out, `ByNode("not a pod") returned no error`) || strings.Contains(out, configmaps.Name()) {
		t.Errorf("verify of an unsolved exercise: err %v, output:\n%s", err, out)
	}
	// NAME alone: that exercise, whatever the chapter's progress.
	out = runOK(t, root, "01-store/2-configmaps")
	if !strings.Contains(out, configmaps.Name()+" — "+configmaps.Title) || !strings.Contains(out, "✓ solved") || strings.Contains(out, bynode.Name()) {
		t.Errorf("NAME alone:\n%s", out)
	}
	if _, err := runErr(root, "no-such-exercise"); err == nil || !strings.Contains(err.Error(), "no exercise") {
		t.Errorf("an unknown NAME: %v", err)
	}
	// A checker that fails points to the next hint.
	next := func(n int) string {
		return fmt.Sprintf("next hint, %d of %d: go run ./cmd/workshop hint %s", n, len(bynode.Hints), bynode.Name())
	}
	if out := runOK(t, root, bynode.Name()); !strings.Contains(out, next(1)) {
		t.Errorf("want %q:\n%s", next(1), out)
	}
	runOK(t, root, "hint", bynode.Name())
	if out := runOK(t, root, bynode.Name()); !strings.Contains(out, next(2)) {
		t.Errorf("after a hint, want %q:\n%s", next(2), out)
	}
}

func TestAPopLoopThatNeverClosesOutGetsTheCheckersMessage(t *testing.T) {
	root, ex := sharedCourse(t)
	answer(t, root, ex["05-processor/5-pop-loop"], `package poploop

// Pop forwards in to out, but never closes out.
func Pop(in <-chan any, out chan<- any) {
	var buffer []any
	var send chan<- any
	var next any
	for {
		select {
		case send <- next:
			if len(buffer) > 0 {
				next, buffer = buffer[0], buffer[1:]
			} else {
				send = nil
			}
		case n, ok := <-in:
			if !ok {
				return
			}
			if send == nil {
				next, send = n, out
			} else {
				buffer = append(buffer, n)
			}
		}
	}
}
`)
	out, err := runErr(root, "verify", "pop-loop")
	if err == nil || !strings.Contains(out, "out was never closed") {
		t.Errorf("want the checker's message about out, got err %v:\n%s", err, out)
	}
	noDump(t, out)
}

// Answers that are wrong in a way an earlier checker let pass (issue 39):
// each must fail its checker, with the message that says why.
func TestWrongBuildAnswersFail(t *testing.T) {
	for _, c := range []struct {
		name, exercise, src, want string
	}{
		{"an error that does not name the type", "01-store/1-bynode", `package bynode

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
)

// ByNode refuses what is not a pod with a fixed error.
func ByNode(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, errors.New("byNode: not a *v1.Pod but a string")
	}
	if pod.Spec.NodeName == "" {
		return nil, nil
	}
	return []string{pod.Spec.NodeName}, nil
}
`, "does not name the type it got"},
		{"resourceVersions compared as strings, UID ignored", "02-lister/4-freshness", `package freshness

import (
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	lister "github.com/informer-anatomy/informer-anatomy/chapters/02-lister"
)

// Seen compares resourceVersions as strings ("9" >= "10" is true).
func Seen(l lister.ConfigMapNamespaceLister, created *corev1.ConfigMap) (bool, error) {
	cm, err := l.Get(created.Name)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return cm.ResourceVersion >= created.ResourceVersion, nil
}
`, "a later state of the created ConfigMap"},
		{"resourceVersions compared as numbers, UID ignored", "02-lister/4-freshness", `package freshness

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	lister "github.com/informer-anatomy/informer-anatomy/chapters/02-lister"
)

// Seen compares resourceVersions as numbers and never looks at the UID.
func Seen(l lister.ConfigMapNamespaceLister, created *corev1.ConfigMap) (bool, error) {
	cm, err := l.Get(created.Name)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	have, _ := strconv.ParseUint(cm.ResourceVersion, 10, 64)
	want, _ := strconv.ParseUint(created.ResourceVersion, 10, 64)
	return have >= want, nil
}
`, "a newer one of the same name"},
		{"a bounded channel and a draining goroutine", "05-processor/5-pop-loop", `package poploop

// Pop buffers in a channel of fixed capacity, drained by a goroutine.
func Pop(in <-chan any, out chan<- any) {
	buf := make(chan any, 1<<16)
	go func() {
		defer close(out)
		for n := range buf {
			out <- n
		}
	}()
	for n := range in {
		buf <- n
	}
	close(buf)
}
`, "goroutines ran for it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, ex := sharedCourse(t)
			answer(t, root, ex[c.exercise], c.src)
			out, err := runErr(root, "verify", c.exercise)
			if err == nil || !strings.Contains(out, c.want) {
				t.Errorf("want the checker to fail with %q, got err %v:\n%s", c.want, err, out)
			}
		})
	}
}

func TestAnEndlessLoopGetsTheCheckersMessage(t *testing.T) {
	root, ex := sharedCourse(t)
	answer(t, root, ex["01-store/1-bynode"], `package bynode

// ByNode never returns.
func ByNode(obj any) ([]string, error) {
	for {
	}
}
`)
	// A shorter checker limit, which the kit scales its call limit to
	// (a third: 2 s, not 10): the message is the same, sooner.
	t.Setenv(timeoutEnv, "6s")
	out, err := runErr(root, "verify", "bynode")
	if err == nil || !strings.Contains(out, "ByNode (called by the check and by both indexers) did not return within 2s") {
		t.Errorf("want the checker's message about ByNode, got err %v:\n%s", err, out)
	}
	noDump(t, out)
}

// What no checker can guard, a package initialiser that never ends, runs
// before any test: the kit's watchdog says where, and ends the binary.
func TestAnInitialiserThatNeverEndsIsReportedWithoutADump(t *testing.T) {
	root, ex := sharedCourse(t)
	e := ex["01-store/3-inplace"]
	stub, err := os.ReadFile(filepath.Join(root, e.Path(), e.Files[0]))
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, e, string(stub)+"\nvar forever = func() int {\n\tfor {\n\t}\n}()\n")
	// The kit's watchdog gives up after two thirds of the checker's limit
	// (4 s here, 20 s by default).
	t.Setenv(timeoutEnv, "6s")
	out, err := runErr(root, "verify", e.Name())
	if err == nil || !regexp.MustCompile(`initialising the exercise's package did not finish within 4s \(exercise\.go:\d+\)`).MatchString(out) {
		t.Errorf("want the kit's words, naming the line, got err %v:\n%s", err, out)
	}
	noDump(t, out)
}

// go test's own timeout (a checker that does not end) is reported in
// words, naming the test, without the goroutine dump that follows it.
func TestGoTestsTimeoutIsReportedInWords(t *testing.T) {
	out := cutTest(strings.Split(`=== RUN   TestClosingInClosesOut
    check_test.go:12: a message before
panic: test timed out after 30s
	running tests:
		TestClosingInClosesOut (30s)

goroutine 17 [running]:
testing.(*M).startAlarm.func1()
	/usr/lib/go/src/testing/testing.go:2484 +0x345
created by time.goFunc
FAIL	example.com/x	30.012s`, "\n"))
	text := strings.Join(out, "\n")
	if !strings.Contains(text, "a message before") || !strings.Contains(text, "did not finish within 30s (TestClosingInClosesOut was still running)") {
		t.Errorf("got:\n%s", text)
	}
	noDump(t, text)
	t.Setenv("WORKSHOP_TIMEOUT", "1m30s")
	if d := timeoutFor(&Exercise{Needs: "none"}); d != 90*time.Second {
		t.Errorf("WORKSHOP_TIMEOUT=1m30s: timeout %s", d)
	}
}

// 1 MB: ten thousand lines, a hundred times past the cut. Not more: the
// lines pass through go test -json within the call's kit.CallTimeout, and
// 10 MB took past it on a loaded two-core machine, where the checker then
// (rightly) says ByNode did not return instead of what this test reads.
func TestAnAnswerPrintingMegabytesDoesNotHideTheCheckersMessage(t *testing.T) {
	root, ex := sharedCourse(t)
	answer(t, root, ex["01-store/1-bynode"], `package bynode

import (
	"fmt"
	"strings"
)

var printed bool

// ByNode prints 1 MB once, and is wrong.
func ByNode(obj any) ([]string, error) {
	if !printed {
		printed = true
		line := strings.Repeat("x", 99)
		for range 10_000 {
			fmt.Println(line)
		}
	}
	return nil, nil
}
`)
	out, err := runErr(root, "verify", "bynode")
	if err == nil || !strings.Contains(out, `ByNode("not a pod") returned no error`) || !strings.Contains(out, "ListIndexFuncValues(byNode)") {
		t.Errorf("the checker's messages must be shown, got err %v:\n%.3000s", err, out)
	}
	if n := strings.Count(out, "\n"); n > 100 {
		t.Errorf("the output must be cut: %d lines", n)
	}
}

func TestResetKeepsYourVersionAndSaysWhere(t *testing.T) {
	root, ex := sharedCourse(t)
	e := ex["01-store/1-bynode"]
	file := filepath.Join(root, e.Path(), e.Files[0])
	shipped, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	mine := string(shipped) + "\n// my notes: the store compares old and new index values\n"
	write(t, root, e, mine)
	out := runOK(t, root, "reset", e.Name())
	m := regexp.MustCompile(`kept in (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("reset must say where your version is kept:\n%s", out)
	}
	if kept, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(m[1]))); err != nil || string(kept) != mine {
		t.Errorf("the backup %s: %v, %q", m[1], err, kept)
	}
	if back, _ := os.ReadFile(file); !bytes.Equal(back, shipped) {
		t.Errorf("reset did not bring the stub back")
	}
	if out := runOK(t, root, "reset", e.Name()); strings.Contains(out, "kept in") || !strings.Contains(out, "as shipped already") {
		t.Errorf("a second reset has nothing to keep:\n%s", out)
	}
	if out := runOK(t, root, "list"); strings.Contains(out, ".backup") {
		t.Errorf("the backup must not show up as an exercise:\n%s", out)
	}
}

func TestResetRepairsADamagedExercise(t *testing.T) {
	root, ex := sharedCourse(t)
	bynode, configmaps, inplace := ex["01-store/1-bynode"], ex["01-store/2-configmaps"], ex["01-store/3-inplace"]
	shipped, err := os.ReadFile(filepath.Join(root, bynode.Path(), bynode.Files[0]))
	if err != nil {
		t.Fatal(err)
	}
	// One exercise's package doc comment (the task, and the runner's
	// metadata) deleted, another's whole directory, a third's hints.md.
	write(t, root, bynode, "package bynode\n\nfunc ByNode(obj any) ([]string, error) { return nil, nil }\n")
	if err := os.RemoveAll(filepath.Join(root, configmaps.Path())); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, inplace.Path(), "hints.md")); err != nil {
		t.Fatal(err)
	}
	out := runOK(t, root, "list")
	for _, e := range []*Exercise{bynode, configmaps, inplace} {
		if !strings.Contains(out, "[damaged: reset "+e.Name()+"]") {
			t.Errorf("list must name the damaged %s:\n%s", e.Name(), out)
		}
	}
	if out := runOK(t, root, bynode.Name()); !strings.Contains(out, "package doc comment (the task) is missing") || !strings.Contains(out, `ByNode("not a pod") returned no error`) {
		t.Errorf("the exercise must say what is damaged, and still be checked:\n%s", out)
	}
	if out, err := runErr(root, "verify", configmaps.Name()); err == nil || !strings.Contains(out, "is missing: go run ./cmd/workshop reset "+configmaps.Name()) {
		t.Errorf("verify of an exercise whose directory is gone: err %v:\n%s", err, out)
	}
	if _, err := runErr(root, "hint", inplace.Name()); err == nil || !strings.Contains(err.Error(), "reset") {
		t.Errorf("hint without hints.md: %v", err)
	}
	for _, e := range []*Exercise{bynode, configmaps, inplace} {
		runOK(t, root, "reset", e.Name())
	}
	if back, _ := os.ReadFile(filepath.Join(root, bynode.Path(), bynode.Files[0])); !bytes.Equal(back, shipped) {
		t.Errorf("reset did not repair %s:\n%s", bynode.Name(), back)
	}
	for _, f := range []string{"hints.md", configmaps.Files[0], "check_test.go"} {
		if !fileExists(filepath.Join(root, configmaps.Path(), f)) {
			t.Errorf("reset did not bring back %s's %s", configmaps.Name(), f)
		}
	}
	if out := runOK(t, root, "list"); strings.Contains(out, "damaged") {
		t.Errorf("still damaged after reset:\n%s", out)
	}
	if out := runOK(t, root, "hint", inplace.Name()); !strings.Contains(out, "hint 1 of") {
		t.Errorf("hint after reset:\n%s", out)
	}
}

// 06-factory/5-viewer needs a trace viewer (Jaeger), not a browser: --browser,
// which adds the live view's exercises, must not stop at it.
func TestTheTraceViewerExerciseIsNotABrowserOne(t *testing.T) {
	exs, err := load("../..")
	if err != nil {
		t.Fatal(err)
	}
	viewer, err := find(exs, "06-factory/5-viewer")
	if err != nil {
		t.Fatal(err)
	}
	if viewer.Needs != "viewer" {
		t.Errorf("06-factory/5-viewer: Needs %q, want viewer", viewer.Needs)
	}
	browser := 0
	for _, e := range included(exs, []string{"browser"}) {
		if e.Needs == "browser" {
			browser++
		}
		if e == viewer {
			t.Errorf("--browser includes %s", e.Name())
		}
	}
	if browser == 0 {
		t.Errorf("--browser includes no browser exercise")
	}
}

// The selfcheck's leak check must find an answer wherever a checker
// prints it, and must not object to a message that only says what is
// wrong.
func TestTheLeakCheckFindsTheAnswerInACheckersOutput(t *testing.T) {
	str := func(s string) rendering {
		q := fmt.Sprintf("%q", s)
		return rendering{Kind: "string", V: s, PlusV: s, SharpV: q, Q: q}
	}
	num := func(n int) rendering {
		s := fmt.Sprint(n)
		return rendering{Kind: "int", V: s, PlusV: s, SharpV: s}
	}
	boolean := func(b bool) rendering {
		s := fmt.Sprint(b)
		return rendering{Kind: "bool", V: s, PlusV: s, SharpV: s}
	}
	list := func(elems ...string) rendering {
		return rendering{Kind: "slice", V: fmt.Sprintf("%v", elems), PlusV: fmt.Sprintf("%+v", elems), SharpV: fmt.Sprintf("%#v", elems), Q: fmt.Sprintf("%q", elems), Elems: elems}
	}
	stub := map[string]rendering{"TombstoneRV": str(""), "WebPods": num(0), "Unlock": boolean(false), "Keys": list(), "Root": str("")}
	sol := map[string]rendering{"TombstoneRV": str("last known"), "WebPods": num(3), "Unlock": boolean(true), "Keys": list("default/b", "default/d"), "Root": str("AddEventHandler")}
	clean := []string{
		`TombstoneRV: you wrote "", not the resourceVersion the tombstone's root span carries`,
		"WebPods: you predicted 0, not what ByIndex returns for the 5 pods",
		"StillWebPods: you predicted 0, chapter 1's store gives 3", // another prediction's message
		"Unlock: you predicted false, not what Add did; true or false, think of the lock",
		"Keys: you predicted [], not the keys the store holds: you wrote no entry",
		`Root: you predicted "", not a root of the late handler's traces`,
	}
	if p := predictionLeaks(stub, sol, clean, clean); len(p) != 2 || !strings.Contains(p[0], "about Unlock gives its answer away (true)") {
		t.Errorf("a message naming Unlock and true: %q", p)
	}
	clean[3] = "Unlock: you predicted false, not what Add did"
	if p := predictionLeaks(stub, sol, clean, clean); len(p) != 1 || !strings.Contains(p[0], "names the yes/no prediction Unlock on its own") {
		t.Errorf("a message that names a yes/no prediction alone: %q", p)
	}
	clean[3] = "Unlock and WebPods are not what Add and ByIndex did"
	if p := predictionLeaks(stub, sol, clean, clean); len(p) != 0 {
		t.Errorf("messages that give nothing away: %q", p)
	}
	for _, leak := range []struct{ message, want string }{
		{`TombstoneRV: you wrote ""; the root carries "41" (last known 41, list 44): "last known"`, "TombstoneRV's answer away"},
		{"the root carries last known", "TombstoneRV's answer away"},
		{"WebPods: you predicted 0, chapter 1's store gives 3", "about WebPods gives its answer away (3)"},
		{`Keys: you predicted [], the store has ["default/b" "default/d"]`, "Keys's answer away"},
		{"Keys: the store has [default/b default/d]", "Keys's answer away"},
		{"Keys: the store has default/b", "Keys's answer away: default/b"},
		{`Root: you predicted "", the roots are ["AddEventHandler" "ListAndWatch list"]`, `Root's answer away: "AddEventHandler"`},
		{"Root: you predicted \"\", it was AddEventHandler", "about Root gives its answer away (AddEventHandler)"},
	} {
		messages := append(slices.Clone(clean), leak.message)
		p := predictionLeaks(stub, sol, messages, messages)
		if !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, leak.want) }) {
			t.Errorf("%q: want a problem with %q, got %q", leak.message, leak.want, p)
		}
	}
	// A message need not name the prediction it is about (naming which
	// value is wrong lets a guess replace the reasoning), but a checker
	// that fails must say something.
	if p := predictionLeaks(stub, sol, clean[1:], clean[1:]); len(p) != 0 {
		t.Errorf("no message naming TombstoneRV: %q", p)
	}
	if p := predictionLeaks(stub, sol, nil, nil); len(p) != 1 || !strings.Contains(p[0], "says nothing") {
		t.Errorf("a checker that says nothing: %q", p)
	}
	if p := predictionLeaks(sol, sol, nil, nil); len(p) != 1 || !strings.Contains(p[0], "nothing to predict") {
		t.Errorf("a stub that holds the answer: %q", p)
	}
}

func TestTheLeakCheckFindsABuildExercisesCode(t *testing.T) {
	root := t.TempDir()
	e := &Exercise{Chapter: "01-x", Dir: "1-y", Files: []string{"exercise.go"}}
	for path, src := range map[string]string{
		e.Path():         "package y\n\nfunc F(n int) int {\n\treturn 0\n}\n",
		e.SolutionPath(): "package y\n\nfunc F(n int) int {\n\t// twice, plus one\n\treturn 2*n + 1\n}\n",
	} {
		if err := os.MkdirAll(filepath.Join(root, path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, path, "exercise.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if p := codeLeaks(root, e, []string{"F(2) = 0, want 5"}); len(p) != 0 {
		t.Errorf("a message about behaviour: %q", p)
	}
	if p := codeLeaks(root, e, []string{"F(2) = 0: write return 2*n + 1"}); len(p) != 1 {
		t.Errorf("a message with the solution's line: %q", p)
	}
}

// docs/workshop.md is the page participants read: it must not hold the
// answer key, link the instructors' file, or quote a prediction of a
// solution; the instructors' file must cover every exercise.
func TestTheParticipantsPageGivesNoAnswerAway(t *testing.T) {
	page, err := os.ReadFile("../../docs/workshop.md")
	if err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile("../../workshop/INSTRUCTORS.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"INSTRUCTORS", "Answer key", "answer key ("} {
		if strings.Contains(string(page), bad) {
			t.Errorf("docs/workshop.md contains %q", bad)
		}
	}
	exs, err := load("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range exs {
		if !strings.Contains(string(page), "`"+e.Name()+"` |") {
			t.Errorf("docs/workshop.md has no row for %s", e.Name())
		}
		if !strings.Contains(string(key), e.Dir+".**") {
			t.Errorf("workshop/INSTRUCTORS.md has no answer for %s", e.Name())
		}
		if e.Kind == "build" {
			continue
		}
		for _, s := range solutionStrings(t, e) {
			if notJustLetters(s) && strings.Contains(string(page), s) {
				t.Errorf("docs/workshop.md quotes %s's answer %q", e.Name(), s)
			}
		}
	}
}

// solutionStrings are the string literals in the values of e's solution's
// package-level variables.
func solutionStrings(t *testing.T, e *Exercise) []string {
	t.Helper()
	var out []string
	for _, lit := range varLiterals(t, filepath.Join("../..", e.SolutionPath()), e) {
		if lit.Kind != token.STRING {
			continue
		}
		if u, err := strconv.Unquote(lit.Value); err == nil {
			out = append(out, u)
		}
	}
	return out
}

// varLiterals are the literals (strings, numbers, characters) in the
// values of the package-level variables of dir's copy of e's files: where
// a prediction's answer is written.
func varLiterals(t *testing.T, dir string, e *Exercise) []*ast.BasicLit {
	t.Helper()
	var out []*ast.BasicLit
	for _, f := range e.Files {
		pf, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, f), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range pf.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				for _, v := range s.(*ast.ValueSpec).Values {
					ast.Inspect(v, func(n ast.Node) bool {
						if lit, ok := n.(*ast.BasicLit); ok {
							out = append(out, lit)
						}
						return true
					})
				}
			}
		}
	}
	return out
}

// The selfcheck of one chapter passes on the course as shipped, build
// exercises included: each check reads the files it needs while they are
// as it needs them (the leak check reads a stub beside its solution, so
// it must run before the solutions are put in place; when it ran after,
// every build exercise was reported as having nothing to build).
func TestSelfcheckOfOneChapterPasses(t *testing.T) {
	exs, err := load("../..")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(exs, func(e *Exercise) bool { return e.Chapter == "01-store" && e.Kind == "build" }) {
		t.Fatal("01-store has no build exercise: the test would not cover the leak check")
	}
	var out bytes.Buffer
	if err := selfcheck("../..", []string{"01-store"}, &out); err != nil || strings.Contains(out.String(), "✗") {
		t.Fatalf("selfcheck 01-store: %v\n%s", err, &out)
	}
}

// fakeCourse makes a course in a new git repository holding only the
// exercises in files (path under the repository → content), committed as
// shipped, and returns its root.
func fakeCourse(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	names := []string{"go.mod", "go.sum", "chapters", "demo", "dropin", "internal", "liveprobe", "workshop/kit", "workshop/.gitignore"}
	for _, n := range names {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, n)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := copyTree("../..", root, names); err != nil {
		t.Fatal(err)
	}
	git(t, root, "init", "-q")
	for path, src := range files {
		p := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, root, "add", ".")
	git(t, root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "exercises")
	return root
}

// predictExercise is the files of a predict exercise 01-x/<dir> whose
// stub and solution hold vars (Go declarations) and whose checker is
// check (the body of TestPredictions).
func predictExercise(dir, stubVars, solVars, check string) map[string]string {
	return predictExerciseTask(dir, "Predict.", stubVars, solVars, check)
}

// predictExerciseTask is predictExercise with the task (one line) given.
func predictExerciseTask(dir, task, stubVars, solVars, check string) map[string]string {
	doc := "// Package p is a test exercise.\n//\n// # Test " + dir + "\n//\n// Kind: predict. Minutes: 5. Needs: none. Practises: nothing.\n//\n// " + task + "\npackage p\n\n"
	imports := "import \"testing\"\n\n"
	if strings.Contains(check, "kit.") {
		imports = "import (\n\t\"testing\"\n\n\t\"github.com/informer-anatomy/informer-anatomy/workshop/kit\"\n)\n\n"
	}
	return map[string]string{
		"workshop/exercises/01-x/" + dir + "/exercise.go": doc + stubVars,
		"workshop/solutions/01-x/" + dir + "/exercise.go": doc + solVars,
		"workshop/exercises/01-x/" + dir + "/hints.md":    "## Hint 1\nThink.\n",
		"workshop/exercises/01-x/" + dir + "/check_test.go": "//go:build workshop\n\npackage p\n\n" + imports +
			"func TestPredictions(t *testing.T) {\n" + check + "\n}\n",
	}
}

// The selfcheck plays a participant who does not think: one who tries
// every yes/no combination, and one who changes only what the checker
// names. An exercise either of them solves is reported; one with an
// answer that cannot be guessed is not.
func TestTheSelfcheckSolvesGuessableExercisesByTrial(t *testing.T) {
	files := map[string]string{}
	for dir, ex := range map[string][3]string{
		// Only yes/no values: the coin-tosser finds it.
		"1-yesno": {"var A, B = false, false\n", "var A, B = true, false\n",
			`if A != true || B != false { t.Errorf("your predictions are not what happened") }`},
		// A small count and a yes/no value, each named when wrong: the
		// flipper finds it.
		"2-named": {"var N, Y = -1, false\n", "var N, Y = 3, true\n",
			`if N != 3 { t.Errorf("N: you predicted %d, not what happened", N) }
if Y != true { t.Errorf("Y: you predicted %v, not what happened", Y) }`},
		// A choice the task... is not offered, a list: neither finds it.
		"3-list": {"var Y = false\nvar L []string\n", "var Y = true\nvar L = []string{\"watch rv=S\", \"list rv=0\"}\n",
			`if Y != true || len(L) != 2 || L[0] != "watch rv=S" || L[1] != "list rv=0" { t.Errorf("Y and L: not what the server saw") }`},
		// A list that starts as its answer: leaving it alone is right.
		"4-start": {"var K = []string{\"watch rv=S\"}\nvar L []string\n", "var K = []string{\"watch rv=S\"}\nvar L = []string{\"list rv=0\"}\n",
			`if len(L) != 1 || L[0] != "list rv=0" { t.Errorf("not the requests the server saw") }`},
	} {
		for k, v := range predictExercise(dir, ex[0], ex[1], ex[2]) {
			files[k] = v
		}
	}
	// A list of the page's words whose checker says where it first goes
	// wrong (kit.DiffList): the searcher finds it a position at a time.
	maps.Copy(files, predictExerciseTask("5-leaky", `Predict the calls, each "add", "update" or "delete".`, "var L []string\n", "var L = []string{\"update\", \"delete\", \"update\"}\n",
		`if d := kit.DiffList(L, []string{"update", "delete", "update"}); d != "" { t.Errorf("L: not the calls the handler got: %s", d) }`))
	// The same, its checker locating nothing: safe.
	maps.Copy(files, predictExerciseTask("6-tight", `Predict the calls, each "add", "update" or "delete".`, "var L []string\n", "var L = []string{\"update\", \"delete\", \"update\"}\n",
		`if kit.DiffList(L, []string{"update", "delete", "update"}) != "" { t.Errorf("L: not the calls the handler got: which of them does a filter pass on?") }`))
	root := fakeCourse(t, files)
	var out bytes.Buffer
	err := selfcheck(root, nil, &out)
	if err == nil {
		t.Fatalf("selfcheck passed a course that can be solved by trial:\n%s", &out)
	}
	got := out.String()
	for _, want := range []string{
		"01-x/1-yesno: it can be solved by trial: trying the yes/no values of A, B (4 combinations)",
		"01-x/2-named: it can be solved by trial: changing only what the checker names (N, Y)",
		"01-x/4-start: the stub's K is already its answer",
		"01-x/5-leaky: it can be solved by trial: a script that tries the page's quoted words",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in:\n%s", want, got)
		}
	}
	for _, safe := range []string{"01-x/3-list", "01-x/6-tight"} {
		if strings.Contains(got, safe) {
			t.Errorf("%s, whose answer cannot be found by trial, was reported:\n%s", safe, got)
		}
	}
}

// A checker of concurrent code catches a racy answer every time, and its
// ✓ never comes from go test's cache: 06-factory/3 once accepted an answer
// that checked and stored under two holds of the lock about half the time.
func TestARacyInformerForFailsEveryRun(t *testing.T) {
	root, e := courseOf(t, "06-factory/3-informer-for")
	if !e.Concurrent || !strings.Contains(goCommand(e), "-race") {
		t.Errorf("06-factory/3's checker is not marked %s: %s", concurrentMark, goCommand(e))
	}
	// The file both racy answers share; they differ in InformerFor only.
	const registry = `package informerfor

import (
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
)

type Registry struct {
	mu        sync.Mutex
	informers map[any]processor.SharedIndexInformer
}
`
	for name, method := range map[string]string{
		"check, then build and store under a second hold": `
func (r *Registry) InformerFor(obj runtime.Object, newFunc func() processor.SharedIndexInformer) processor.SharedIndexInformer {
	t := reflect.TypeOf(obj)
	r.mu.Lock()
	inf, ok := r.informers[t]
	r.mu.Unlock()
	if ok {
		return inf
	}
	inf = newFunc()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.informers == nil {
		r.informers = map[any]processor.SharedIndexInformer{}
	}
	r.informers[t] = inf
	return inf
}
`,
		"no lock": `
func (r *Registry) InformerFor(obj runtime.Object, newFunc func() processor.SharedIndexInformer) processor.SharedIndexInformer {
	t := reflect.TypeOf(obj)
	if inf, ok := r.informers[t]; ok {
		return inf
	}
	if r.informers == nil {
		r.informers = map[any]processor.SharedIndexInformer{}
	}
	inf := newFunc()
	r.informers[t] = inf
	return inf
}
`,
	} {
		answer(t, root, e, registry+method)
		for run := range 4 {
			out, err := runErr(root, "verify", e.Name())
			if err == nil {
				t.Fatalf("%s: run %d passed the checker:\n%s", name, run+1, out)
			}
			if !strings.Contains(out, "✗ not yet") {
				t.Fatalf("%s: run %d did not run the checker:\n%s", name, run+1, out)
			}
		}
	}
	if err := putSolution(root, e); err != nil {
		t.Fatal(err)
	}
	runOK(t, root, "verify", e.Name())
}

// The verdict is the checker's alone: a participant's own failing test in
// the folder does not turn a solved exercise into "not yet".
func TestAScratchTestDoesNotDecideTheVerdict(t *testing.T) {
	root, ex := sharedCourse(t)
	e := ex["01-store/2-configmaps"]
	if err := putSolution(root, e); err != nil {
		t.Fatal(err)
	}
	scratch := "//go:build workshop\n\npackage " + pkgName(t, root, e) + "\n\nimport \"testing\"\n\nfunc TestMine(t *testing.T) { t.Fatal(\"my own experiment\") }\n"
	if err := os.WriteFile(filepath.Join(root, e.Path(), "mine_test.go"), []byte(scratch), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := runOK(t, root, "verify", e.Name()); !strings.Contains(out, "1 of 1 solved") {
		t.Errorf("a solved exercise with a failing scratch test:\n%s", out)
	}
}

// Nor one that does not compile, or that declares the checker's own test
// name: the runner hides every _test.go but the checker's (an overlay), so
// the package still builds and the verdict is the checker's. Before, either
// made a solved exercise read "does not compile".
func TestABrokenScratchTestDoesNotDecideTheVerdict(t *testing.T) {
	root, ex := sharedCourse(t)
	e := ex["01-store/1-bynode"]
	if err := putSolution(root, e); err != nil {
		t.Fatal(err)
	}
	tests, err := checkerTests(root, e)
	if err != nil || len(tests) == 0 {
		t.Fatalf("checker tests of %s: %v %v", e.Name(), tests, err)
	}
	pkg := pkgName(t, root, e)
	for name, src := range map[string]string{
		"broken_test.go": "//go:build workshop\n\npackage " + pkg + "\n\nfunc broken( {\n",
		"same_test.go":   "//go:build workshop\n\npackage " + pkg + "\n\nimport \"testing\"\n\nfunc " + tests[0] + "(t *testing.T) {}\n",
	} {
		path := filepath.Join(root, e.Path(), name)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(path) }) // the course is shared
	}
	if out := runOK(t, root, "verify", e.Name()); !strings.Contains(out, "1 of 1 solved") {
		t.Errorf("a solved exercise beside a scratch test that does not compile and one that redeclares %s:\n%s", tests[0], out)
	}
}

func pkgName(t *testing.T, root string, e *Exercise) string {
	t.Helper()
	_, pkg, err := packageDoc(filepath.Join(root, e.Path(), e.Files[0]))
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

// The selfcheck checks the course as shipped, also on a participant's
// tree: solved stubs and scratch files are not what it judges.
func TestTheSelfcheckJudgesTheShippedStubsOnAParticipantsTree(t *testing.T) {
	root, e := courseOf(t, "01-store/2-configmaps")
	if err := copyTree("../..", root, []string{"docs"}); err != nil { // the Practises sections
		t.Fatal(err)
	}
	if err := putSolution(root, e); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, e.Path(), "mine_test.go"), []byte("package "+pkgName(t, root, e)+"\n\nfunc broken( {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := selfcheck(root, nil, &out); err != nil || strings.Contains(out.String(), "✗") {
		t.Errorf("selfcheck on a participant's tree (a solved stub, a scratch file): %v\n%s", err, &out)
	}
	if !strings.Contains(out.String(), "as git's HEAD has them") {
		t.Errorf("selfcheck does not say it checks the shipped files:\n%s", &out)
	}
	out.Reset()
	if err := selfcheck(root, []string{"--worktree"}, &out); err == nil {
		t.Errorf("selfcheck --worktree passed a tree whose stub is solved and a file does not compile:\n%s", &out)
	}
}

// docs/workshop.md's numbers come from the exercises' own metadata: how
// many there are, how many need nothing, their minutes in all, each row's
// kind and minutes; and the three-hour agenda holds exactly the ★
// exercises, each block at least as long as its exercises' estimates,
// with 20 minutes of slack in all.
func TestTheWorkshopPageAgreesWithTheExercises(t *testing.T) {
	b, err := os.ReadFile("../../docs/workshop.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	exs, err := load("../..")
	if err != nil {
		t.Fatal(err)
	}
	total, none := 0, 0
	byName := map[string]*Exercise{}
	for _, e := range exs {
		total += e.Minutes
		if e.Needs == "none" {
			none++
		}
		byName[e.Name()] = e
	}
	for _, want := range []string{
		fmt.Sprintf("A course of %d exercises", len(exs)),
		fmt.Sprintf("Nothing else for the %d\nexercises marked *needs: none*. %d are marked:", none, len(exs)-none),
		fmt.Sprintf("The course has %d minutes of exercises (about %d hours)", total, (total+30)/60),
	} {
		if !strings.Contains(page, want) {
			t.Errorf("docs/workshop.md does not say %q", want)
		}
	}
	// Folders are numbered as the chapters: every row under "### Chapter
	// N" names an exercise of a folder 0N-….
	chapter := ""
	for _, line := range strings.Split(page, "\n") {
		if m := regexp.MustCompile(`^### Chapter (\d)\b`).FindStringSubmatch(line); m != nil {
			chapter = "0" + m[1] + "-"
		} else if strings.HasPrefix(line, "### ") || strings.HasPrefix(line, "## ") {
			chapter = ""
		}
		if m := regexp.MustCompile("^\\| (?:★ )?`([\\w./-]+)` \\|").FindStringSubmatch(line); m != nil && chapter != "" && !strings.HasPrefix(m[1], chapter) {
			t.Errorf("docs/workshop.md lists %s under chapter %s", m[1], chapter)
		}
	}
	// The exercise tables: a row per exercise, with its kind and minutes.
	row := regexp.MustCompile("(?m)^\\| (★ )?`([\\w./-]+)` \\| (\\w+) \\| (\\d+) \\|")
	starred := map[string]bool{}
	starMinutes := 0
	for _, m := range row.FindAllStringSubmatch(page, -1) {
		e := byName[m[2]]
		if e == nil {
			t.Errorf("docs/workshop.md has a row for %s, which is no exercise", m[2])
			continue
		}
		if m[3] != e.Kind || m[4] != strconv.Itoa(e.Minutes) {
			t.Errorf("docs/workshop.md: %s is a %s of %s minutes, its metadata says %s of %d", e.Name(), m[3], m[4], e.Kind, e.Minutes)
		}
		if m[1] != "" {
			starred[e.Name()] = true
			starMinutes += e.Minutes
		}
	}
	if want := fmt.Sprintf("marked ★\nbelow (%d minutes)", starMinutes); !strings.Contains(page, want) {
		t.Errorf("docs/workshop.md does not say %q", want)
	}
	// The agenda.
	agenda := regexp.MustCompile(`(?m)^\| (\d):(\d\d) \| [^|]+\| (.+) \|$`)
	type block struct {
		start int
		names []string
	}
	var blocks []block
	for _, m := range agenda.FindAllStringSubmatch(page, -1) {
		h, _ := strconv.Atoi(m[1])
		mi, _ := strconv.Atoi(m[2])
		var names []string
		for _, n := range regexp.MustCompile("`([\\w./-]+)`").FindAllStringSubmatch(m[3], -1) {
			names = append(names, n[1])
		}
		blocks = append(blocks, block{h*60 + mi, names})
	}
	if len(blocks) < 3 || blocks[len(blocks)-1].start != 180 {
		t.Fatalf("the agenda has %d rows and does not end at 3:00", len(blocks))
	}
	slack := 0
	inAgenda := map[string]bool{}
	for i, bl := range blocks[:len(blocks)-1] {
		if len(bl.names) == 0 {
			continue
		}
		d := blocks[i+1].start - bl.start
		sum := 0
		for _, n := range bl.names {
			e := byName[n]
			if e == nil || !starred[n] {
				t.Errorf("the agenda names %s, which is not a ★ exercise", n)
				continue
			}
			inAgenda[n] = true
			sum += e.Minutes
		}
		if sum > d {
			t.Errorf("the agenda's block at %d:%02d lasts %d minutes, its exercises %d", bl.start/60, bl.start%60, d, sum)
		}
		slack += d - sum
	}
	for n := range starred {
		if !inAgenda[n] {
			t.Errorf("★ %s is not in the agenda", n)
		}
	}
	if slack < 20 {
		t.Errorf("the three-hour agenda has %d minutes of slack, want 20", slack)
	}
}

// Hints lead, and the last one is a strong nudge, not the answer (that is
// `solution NAME`): no hint quotes a solution's prediction (a string with
// more than letters, a CamelCase name, a number of two digits or more) or
// a line of a build exercise's solution the stub lacks.
func TestNoHintGivesTheAnswerAway(t *testing.T) {
	exs, err := load("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range exs {
		if e.Kind == "build" {
			for i, h := range e.Hints {
				for _, p := range codeLeaks("../..", e, strings.Split(h, "\n")) {
					if strings.Contains(p, "shows a line") {
						t.Errorf("%s: hint %d: %s", e.Name(), i+1, p)
					}
				}
			}
			continue
		}
		stub := map[string]bool{}
		for _, s := range literals(t, filepath.Join("../..", e.Path()), e) {
			stub[s] = true
		}
		for _, a := range literals(t, filepath.Join("../..", e.SolutionPath()), e) {
			if stub[a] || !(notJustLetters(a) || camel.MatchString(a) || isNumber(a) && len(a) >= 2) || containsWord(taskOf("../..", e), a) {
				continue
			}
			for i, h := range e.Hints {
				if containsWord(h, a) || notJustLetters(a) && strings.Contains(h, a) {
					t.Errorf("%s: hint %d gives an answer away: %q", e.Name(), i+1, a)
				}
			}
		}
	}
}

// literals are the string, number and character literals of the values of
// the package-level variables in dir's copy of e's files.
func literals(t *testing.T, dir string, e *Exercise) []string {
	t.Helper()
	var out []string
	for _, lit := range varLiterals(t, dir, e) {
		if u, err := strconv.Unquote(lit.Value); err == nil {
			out = append(out, u)
		} else if lit.Kind == token.INT {
			out = append(out, lit.Value)
		}
	}
	return out
}

// No exercise's output carries another's answer: the cross check finds a
// whole answer or a long list entry of one exercise in another's checker
// output, and a build checker whose rule is another exercise's prediction
// names the case, not the expected result.
func TestNoCheckersOutputAnswersAnotherExercise(t *testing.T) {
	pops := &Exercise{Chapter: "04-deltafifo", Dir: "1-pops"}
	dedup := &Exercise{Chapter: "04-deltafifo", Dir: "2-dedup"}
	list := func(elems ...string) rendering {
		return rendering{Kind: "slice", V: fmt.Sprintf("%v", elems), PlusV: fmt.Sprintf("%+v", elems), SharpV: fmt.Sprintf("%#v", elems), Q: fmt.Sprintf("%q", elems), Elems: elems}
	}
	stub := map[string]rendering{"Pops": list()}
	sol := map[string]rendering{"Pops": list("default/a: Added@1 Updated@3", "default/b: Added@2 Deleted@4")}
	exs := []*Exercise{pops, dedup}
	if p := crossLeaksOf(pops, stub, sol, exs, map[string]string{dedup.Name(): "DedupDeltas(Deleted@4 Deleted@5) = [], not what client-go's dedupDeltas returns"}); len(p) != 0 {
		t.Errorf("a message about the case: %q", p)
	}
	if p := crossLeaksOf(pops, stub, sol, exs, map[string]string{dedup.Name(): "the queue pops default/b: Added@2 Deleted@4"}); len(p) != 1 {
		t.Errorf("a message with another exercise's answer: %q", p)
	}

	// The two build checkers the cold run caught, on their stubs.
	all, err := load("../..")
	if err != nil {
		t.Fatal(err)
	}
	var picked []*Exercise
	for _, n := range []string{"04-deltafifo/2-dedup", "04-realfifo/3-batch-rule"} {
		e, err := find(all, n)
		if err != nil {
			t.Fatal(err)
		}
		picked = append(picked, e)
	}
	res, err := runCheckers("../..", picked, "-count=1")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range picked {
		r := res[e.ImportPath()]
		if r.Pass || r.BuildFailed {
			t.Fatalf("%s: the stub as shipped does not fail its checker", e.Name())
		}
		for _, m := range r.Messages {
			for _, bad := range []string{"want ", " pops ", " took "} {
				if strings.Contains(m, bad) && !strings.Contains(m, "the batch size") {
					t.Errorf("%s: its checker prints the expected result, which is another exercise's prediction: %q", e.Name(), m)
				}
			}
		}
	}
}

// Every command numbers an exercise in the whole course: the next
// unsolved one, shown without --all, has the number NAME shows it with.
func TestEveryCommandNumbersAnExerciseAlike(t *testing.T) {
	files := predictExercise("2-b", "var N = -1\n", "var N = 7\n", `if N != 7 { t.Errorf("not what happened") }`)
	for k, v := range predictExercise("1-a", "var N = -1\n", "var N = 7\n", `if N != 7 { t.Errorf("not what happened") }`) {
		files[k] = strings.Replace(v, "Needs: none", "Needs: cluster", 1)
	}
	root := fakeCourse(t, files)
	want := "Exercise 2 of 2: 01-x/2-b"
	if out := runOK(t, root); !strings.Contains(out, want) {
		t.Errorf("the next exercise: want %q in:\n%s", want, out)
	}
	if out := runOK(t, root, "01-x/2-b"); !strings.Contains(out, want) {
		t.Errorf("NAME: want %q in:\n%s", want, out)
	}
}

// The runner's setting and the kit's are one name: a checker's binary
// inherits the runner's environment, and the kit scales its limits to it.
// (The runner does not import the kit, which builds the chapters.)
func TestTheKitReadsTheRunnersTimeout(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "workshop", "kit", "check.go"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "TimeoutEnv = " + strconv.Quote(timeoutEnv); !strings.Contains(string(src), want) {
		t.Errorf("workshop/kit/check.go must declare %s, the runner's setting", want)
	}
}

// agendaCourse is a course of four quick predict exercises (N = 7 is each
// one's answer) whose docs/workshop.md names two of them, out of reading
// order, in its three-hour agenda.
func agendaCourse(t *testing.T) string {
	t.Helper()
	files := map[string]string{}
	for _, dir := range []string{"1-a", "2-b", "3-c", "4-d"} {
		maps.Copy(files, predictExercise(dir, "var N = -1\n", "var N = 7\n", `if N != 7 { t.Errorf("not what happened") }`))
	}
	files[agendaPage] = "# Workshop\n\n| time | what | exercises (★) |\n|---|---|---|\n" +
		"| 0:00 | introduction | — |\n| 0:10 | the first block | `01-x/3-c`, `01-x/1-a` |\n| 0:30 | end | — |\n\n" +
		"A room can add `01-x/4-d` (not in the agenda's table).\n"
	return fakeCourse(t, files)
}

// The runner goes in the agenda's order: the ★ exercises first, as the
// page's agenda names them, then the others by chapter; after ★ 01-x/3-c
// it offers the next ★ one, not 01-x/2-b (after ★ 01-store/1-bynode it
// offered the non-★ 01-store/2-configmaps).
func TestTheRunnerGoesInTheAgendasOrder(t *testing.T) {
	root := agendaCourse(t)
	out := runOK(t, root)
	if !strings.Contains(out, "Exercise 1 of 4: 01-x/3-c") {
		t.Errorf("the first exercise must be the agenda's first:\n%s", out)
	}
	exs, err := load(root)
	if err != nil {
		t.Fatal(err)
	}
	c, err := find(exs, "01-x/3-c")
	if err != nil {
		t.Fatal(err)
	}
	if err := putSolution(root, c); err != nil {
		t.Fatal(err)
	}
	if out := runOK(t, root); !strings.Contains(out, "Exercise 2 of 4: 01-x/1-a") {
		t.Errorf("after the agenda's first, the runner must offer its second, 01-x/1-a:\n%s", out)
	}
	out = runOK(t, root, "list")
	var order []string
	for _, m := range regexp.MustCompile(`[✓✗] (\S+)`).FindAllStringSubmatch(out, -1) {
		order = append(order, m[1])
	}
	if want := []string{"01-x/3-c", "01-x/1-a", "2-b", "4-d"}; !slices.Equal(order, want) {
		t.Errorf("list's order: %q, want %q:\n%s", order, want, out)
	}
	if !strings.Contains(out, "★ the three-hour session") {
		t.Errorf("list must head the session's exercises:\n%s", out)
	}

	// The course's own page: its ★ rows are the runner's first exercises.
	all, err := load("../..")
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join("../..", agendaPage))
	if err != nil {
		t.Fatal(err)
	}
	stars := len(regexp.MustCompile("(?m)^\\| ★ `").FindAllString(string(page), -1))
	ordered := agendaOrder("../..", all)
	for i, e := range ordered {
		if e.Star != (i < stars) {
			t.Errorf("the course's order: %s is number %d, starred %v; the page has %d ★ exercises", e.Name(), i+1, e.Star, stars)
		}
	}
}

// list keeps what each checker said, and a second list on an unchanged
// course runs no go command; a changed exercise is run again, alone, and
// so is every exercise when what they all build on changes.
func TestASecondListOnAnUnchangedCourseRunsNothing(t *testing.T) {
	root := agendaCourse(t)
	runs := func() int {
		goTestRuns.Lock()
		defer goTestRuns.Unlock()
		return goTestRuns.n
	}
	first := runOK(t, root, "list")
	before := runs()
	if second := runOK(t, root, "list"); second != first {
		t.Errorf("the second list differs from the first:\n%s\n%s", first, second)
	}
	if n := runs() - before; n != 0 {
		t.Errorf("the second list on an unchanged course ran go test %d times, want none", n)
	}
	if out := runOK(t, root); !strings.Contains(out, "01-x/3-c") || runs() != before {
		t.Errorf("the default command after list must run nothing either (%d go tests):\n%s", runs()-before, out)
	}

	exs, err := load(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := find(exs, "01-x/2-b")
	if err != nil {
		t.Fatal(err)
	}
	if err := putSolution(root, b); err != nil {
		t.Fatal(err)
	}
	// A scratch test is not what the checker is built from: no new run.
	if err := os.WriteFile(filepath.Join(root, b.Path(), "mine_test.go"), []byte("package p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before = runs()
	out := runOK(t, root, "list")
	if !strings.Contains(out, "✓ 2-b") || !strings.Contains(out, "1 of 4 solved") {
		t.Errorf("list after 01-x/2-b's answer:\n%s", out)
	}
	if n := runs() - before; n != 1 {
		t.Errorf("one exercise changed: list ran go test %d times, want once", n)
	}
	res := readResults(root)
	if len(res) != 4 || !res["01-x/2-b"].Result.Pass || res["01-x/1-a"].Result.Pass {
		t.Errorf("the cache holds %v", res)
	}
	// The kit, a chapter, go.mod: every result depends on them.
	if err := os.WriteFile(filepath.Join(root, "workshop", "kit", "zz_new.go"), []byte("package kit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before = runs()
	if again := runOK(t, root, "list"); again != out {
		t.Errorf("list after a change in the kit:\n%s\nwant:\n%s", again, out)
	}
	if runs() == before {
		t.Errorf("a change in the kit must run the checkers again")
	}
}

// A result a time limit decided is never kept (a loaded machine makes
// one), nor the pass of a checker of concurrent code (a racy answer that
// passed once would keep its ✓).
func TestTheCacheKeepsNoResultATimeLimitDecided(t *testing.T) {
	e := &Exercise{}
	for _, c := range []struct {
		r    *Result
		conc bool
		want bool
	}{
		{&Result{Messages: []string{"not what happened"}}, false, true},
		{&Result{Pass: true}, false, true},
		{&Result{Pass: true}, true, false},
		{&Result{Messages: []string{"not what happened"}}, true, true},
		{&Result{TimedOut: true}, false, false},
		{&Result{Messages: []string{"ByNode did not return within 10s: an endless loop?"}}, false, false},
		{&Result{Output: []string{"kit: initialising the exercise's package did not finish within 20s"}}, false, false},
	} {
		e.Concurrent = c.conc
		if got := cacheable(e, c.r); got != c.want {
			t.Errorf("cacheable(%+v, concurrent %v) = %v", c.r, c.conc, got)
		}
	}
}

// warm compiles and links nothing: linking is what the build cache does
// not keep, and the 51 binaries the old warm linked only to throw them
// away took it 16 minutes on a loaded machine. go -x prints each command
// it runs; a link would be one.
//
// On one chapter and one exercise (a test must not compile the whole
// module), and without copyFlags, as a participant's warm runs: those
// are the build cache entries the course's own go commands have made.
func TestWarmLinksNothing(t *testing.T) {
	narrow := map[string]string{"./...": "./chapters/01-store", "./workshop/...": "./workshop/exercises/01-store/1-bynode"}
	for _, step := range warmSteps {
		args := []string{step[0], "-x"}
		for _, a := range step[1:] {
			if n, ok := narrow[a]; ok {
				a = n
			}
			args = append(args, a)
		}
		cmd := exec.Command("go", args...)
		cmd.Dir = "../.."
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, stderr.String())
		}
		for _, l := range strings.Split(stderr.String(), "\n") {
			if strings.Contains(l, "/link ") || strings.HasPrefix(strings.TrimSpace(l), "link ") {
				t.Errorf("go %v links: %s", args, l)
				break
			}
		}
	}
}

// The searcher fills a template's placeholder with the page's other
// one-letter names, or leaves it empty, as 03-reflector/1's page invites.
func TestTheSearcherTriesThePagesWords(t *testing.T) {
	task := "Predict the requests: \"watch rv=X stream\", \"watch rv=X\" or \"list rv=X limit=N\". Write X as sent, or as S for the state."
	got := searchWords(task)
	for _, want := range []string{"watch rv= stream", "watch rv=S stream", "watch rv=S", "list rv=S limit=", "list rv= limit=S"} {
		if !slices.Contains(got, want) {
			t.Errorf("searchWords lacks %q: %q", want, got)
		}
	}
	if slices.Contains(got, "watch rv=X") {
		t.Errorf("a template is not a word: %q", got)
	}
}

// The searcher solves a checker that locates the first wrong entry of a
// list (kit.DiffList's words), and one that names each wrong prediction
// of small numbers, within trialBudget runs; it does not solve the same
// predictions when the messages locate nothing.
func TestTheSearcherSolvesALeakyCheckerAndNotATightOne(t *testing.T) {
	task := `Predict the calls, each one of "add", "update", "delete", "resync", "bookmark".`
	answer := []any{"update", "delete", "add", "update"}
	diff := func(yours []any) string {
		if len(yours) == 0 {
			return "you wrote no entry"
		}
		for i := range min(len(yours), len(answer)) {
			if yours[i] != answer[i] {
				return fmt.Sprintf("your entry %d (%q) is the first that is not what happened", i+1, yours[i])
			}
		}
		if len(yours) < len(answer) {
			return fmt.Sprintf("your %d entries are right as far as they go, but there were more", len(yours))
		}
		if len(yours) > len(answer) {
			return fmt.Sprintf("there were fewer entries than your %d: the first %d are right", len(yours), len(answer))
		}
		return ""
	}
	countsOK := func(v any, a, b int) bool {
		m := v.(map[string]any)
		return m["A"] == json.Number(strconv.Itoa(a)) && m["B"] == json.Number(strconv.Itoa(b))
	}
	counts := func(a, b int) map[string]any {
		return map[string]any{"A": json.Number(strconv.Itoa(a)), "B": json.Number(strconv.Itoa(b))}
	}
	for _, c := range []struct {
		name  string
		check func(v map[string]any) (bool, []string)
		want  bool
	}{
		{"a list, its first wrong entry located", func(v map[string]any) (bool, []string) {
			l, _ := v["Calls"].([]any)
			if d := diff(l); d != "" {
				return false, []string{"Calls: not the calls the handler got: " + d}
			}
			return true, nil
		}, true},
		{"a list, nothing located", func(v map[string]any) (bool, []string) {
			l, _ := v["Calls"].([]any)
			if diff(l) != "" {
				return false, []string{"not the calls the handler got: a filter passes an update on as what the handler has seen"}
			}
			return true, nil
		}, false},
		{"counts, each named", func(v map[string]any) (bool, []string) {
			var msgs []string
			if !countsOK(v["First"], 1, 0) {
				msgs = append(msgs, "First: not what ByIndex returns")
			}
			if !countsOK(v["Second"], 0, 2) {
				msgs = append(msgs, "Second: not what ByIndex returns")
			}
			return len(msgs) == 0, msgs
		}, true},
		{"counts, one message for both", func(v map[string]any) (bool, []string) {
			if !countsOK(v["First"], 1, 0) || !countsOK(v["Second"], 0, 2) {
				return false, []string{"your counts are not what ByIndex returns: which index entries does Update remove?"}
			}
			return true, nil
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			te := &trialExercise{task: task, check: c.check, stub: map[string]any{}, sol: map[string]any{}}
			if strings.HasPrefix(c.name, "a list") {
				te.names = []string{"Calls"}
				te.stub["Calls"], te.sol["Calls"] = []any{}, answer
			} else {
				te.names = []string{"First", "Second"}
				te.stub["First"], te.stub["Second"] = counts(0, 0), counts(0, 0)
				te.sol["First"], te.sol["Second"] = counts(1, 0), counts(0, 2)
			}
			_, first := c.check(te.stub)
			problems, err := te.searcher(first)
			if err != nil {
				t.Fatal(err)
			}
			if solved := len(problems) > 0; solved != c.want {
				t.Errorf("solved by the searcher: %v, want %v (%d runs): %q", solved, c.want, te.runs.Load(), problems)
			}
			if n := te.runs.Load(); n > trialBudget-1 {
				t.Errorf("the searcher ran the checker %d times after the stub's run; its budget is %d in all", n, trialBudget)
			}
		})
	}
}
