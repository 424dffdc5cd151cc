package main

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/informer-anatomy/informer-anatomy/demo/demoproc"
)

// copied is what a temporary copy of the repository needs for the
// exercises to build: the module files and every package they may import.
// The live view's exercises run cmd/trace-demo (workshop/kit.StartLiveView);
// chapter 7's use package dropin (workshop/kit/controller.go).
var copied = []string{"go.mod", "go.sum", "chapters", "cmd", "demo", "dropin", "internal", "liveprobe", "workshop"}

// copyTree copies the named files and directories of src into dst,
// skipping the runner's progress file and result cache, reset's backups
// and the checker binaries a copy keeps (keepBinaries).
func copyTree(src, dst string, names []string) error {
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(src, n)); errors.Is(err, fs.ErrNotExist) {
			continue // a course without it (a test's) does not need it
		}
		err := filepath.WalkDir(filepath.Join(src, n), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			if d.IsDir() && (d.Name() == ".backup" || d.Name() == ".checkers") {
				return filepath.SkipDir
			}
			if d.IsDir() {
				return os.MkdirAll(filepath.Join(dst, rel), 0o755)
			}
			if d.Name() == ".progress.json" || d.Name() == ".results.json" {
				return nil
			}
			return copyFile(p, filepath.Join(dst, rel))
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

// putSolution copies e's solution over its stub under root.
func putSolution(root string, e *Exercise) error {
	for _, f := range e.Files {
		if err := copyFile(filepath.Join(root, e.SolutionPath(), f), filepath.Join(root, e.Path(), f)); err != nil {
			return err
		}
	}
	return nil
}

var practisesRef = regexp.MustCompile(`(docs/[\w.-]+\.md), "([^"]+)"`)

// checkPractises reports a Practises line that names a doc section which
// does not exist (any more), comparing without backquotes: the course must
// not send people to a heading that was renamed.
func checkPractises(root string, e *Exercise) string {
	for _, m := range practisesRef.FindAllStringSubmatch(e.Practises, -1) {
		b, err := os.ReadFile(filepath.Join(root, m[1]))
		if err != nil {
			return "Practises names " + m[1] + ", which does not exist"
		}
		found := false
		for _, line := range strings.Split(string(b), "\n") {
			plain := func(s string) string { return strings.TrimSpace(strings.ReplaceAll(s, "`", "")) }
			if strings.HasPrefix(line, "#") && plain(strings.TrimLeft(line, "# ")) == plain(m[2]) {
				found = true
			}
		}
		if !found {
			return fmt.Sprintf("Practises names section %q of %s, which has no such heading", m[2], m[1])
		}
	}
	return ""
}

// sameTask reports a stub whose package doc comment (the task the
// participant reads) differs from its solution's (where the runner reads
// the metadata, and which `solution` prints).
func sameTask(root string, e *Exercise) string {
	for _, f := range e.Files {
		a, _, errA := packageDoc(filepath.Join(root, e.Path(), f))
		b, _, errB := packageDoc(filepath.Join(root, e.SolutionPath(), f))
		if (errA == nil) != (errB == nil) || a != b {
			return fmt.Sprintf("the package doc comments of %s and its solution differ", f)
		}
	}
	return ""
}

// selfcheck proves the course in a temporary copy of the repository: every
// exercise is complete (hints, solution, metadata: load checks them), every
// stub compiles and fails its checker, every solution passes it. With
// chapters, only the exercises of those chapters (e.g. 08-liveview) are
// checked: for whoever works on one group.
func selfcheck(root string, chapters []string, out io.Writer) error {
	start := time.Now()
	inACopy() // it works in a temporary copy: share the build cache with other copies
	tmp, err := os.MkdirTemp("", "workshop-selfcheck-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := copyTree(root, tmp, copied); err != nil {
		return err
	}
	worktree := slices.Contains(chapters, "--worktree")
	chapters = slices.DeleteFunc(slices.Clone(chapters), func(c string) bool { return c == "--worktree" })
	if !worktree {
		note, err := shippedExercises(root, tmp)
		if err != nil {
			return err
		}
		if note != "" {
			fmt.Fprintln(out, note)
		}
	}
	exs, err := load(tmp)
	if err != nil {
		return err
	}
	if exs, err = inChapters(exs, chapters); err != nil {
		return err
	}
	var problems []string
	for _, e := range exs {
		problems = append(problems, fileProblems(root, tmp, e)...)
		// Every name the answer needs is on the page (NamesOffPage): a
		// right idea with a name the page never gave cannot pass.
		missing, err := NamesOffPage(tmp, e)
		if err != nil {
			return err
		}
		for _, m := range missing {
			problems = append(problems, fmt.Sprintf("%s: the answer needs %s, which its page never gives", e.Name(), m))
		}
	}
	sc := &selfcheckRun{tmp: tmp, stubAnswers: filepath.Join(tmp, "answers-stub"), solAnswers: filepath.Join(tmp, "answers-solution")}
	if err := sc.prepareAnswers(exs); err != nil {
		return err
	}
	if slices.ContainsFunc(exs, func(e *Exercise) bool { return e.Needs == "browser" }) {
		// The live view's checkers each build cmd/trace-demo
		// (kit.StartLiveView): built once here, they find it up to date
		// instead of linking it side by side.
		// Under its real path: the go command's, from inside it.
		real, err := filepath.EvalSymlinks(tmp)
		if err != nil {
			return err
		}
		if _, err := demoproc.BuildAt(real); err != nil {
			return err
		}
	}
	phase := time.Now()
	stubs, err := sc.runStubs(exs)
	if err != nil {
		return err
	}
	stubsTook := time.Since(phase)
	// Before the solutions go over the stubs: a build exercise's leak
	// check compares the stub's code with its solution's.
	for _, e := range exs {
		problems = append(problems, sc.stubProblems(e, stubs[e.ImportPath()])...)
	}
	phase = time.Now()
	sols, err := sc.runSolutions(exs)
	if err != nil {
		return err
	}
	solsTook := time.Since(phase)
	for _, e := range exs {
		problems = append(problems, sc.solutionProblems(e, stubs[e.ImportPath()], sols[e.ImportPath()])...)
	}
	problems = append(problems, sc.crossLeaks(exs, stubs)...)
	phase = time.Now()
	problems = append(problems, sc.trials(exs, stubs)...)
	trialsTook := time.Since(phase)
	for _, p := range problems {
		fmt.Fprintln(out, "✗ "+p)
	}
	if len(problems) > 0 {
		return quietError{fmt.Sprintf("selfcheck: %d problems", len(problems))}
	}
	fmt.Fprintf(out, "selfcheck: %d exercises; every stub fails its checker without giving the answer away, none yields to trial, every solution passes, each has hints that do not give it away and a page that gives every name its answer needs (%s: stubs %s, solutions %s, trials %s)\n",
		len(exs), time.Since(start).Round(time.Second), stubsTook.Round(time.Second), solsTook.Round(time.Second), trialsTook.Round(time.Second))
	return nil
}

// shippedExercises replaces the copy's workshop/exercises with the one
// git's HEAD has: a participant's tree holds solved stubs (which pass their
// checkers) and scratch files of their own, and the selfcheck is about the
// course as shipped. It says what it did when the files differ; outside a
// git checkout it keeps the files as they are, and says so.
func shippedExercises(root, tmp string) (string, error) {
	const dir = "workshop/exercises"
	cmd := exec.Command("git", "archive", "--format=tar", "HEAD", dir)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return "selfcheck: not a git checkout (" + strings.TrimSpace(stderr.String()) + "): checking the exercises as they are, solved ones included", nil
	}
	if err := os.RemoveAll(filepath.Join(tmp, dir)); err != nil {
		return "", err
	}
	differ := 0
	seen := map[string]bool{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("reading git archive HEAD %s: %w", dir, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return "", err
		}
		path := filepath.Join(tmp, filepath.FromSlash(h.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return "", err
		}
		seen[filepath.FromSlash(h.Name)] = true
		if mine, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(h.Name))); err != nil || !bytes.Equal(mine, data) {
			differ++
		}
	}
	_ = filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != ".progress.json" {
			if rel, _ := filepath.Rel(root, p); !seen[rel] {
				differ++
			}
		}
		return nil
	})
	if differ == 0 {
		return "", nil
	}
	return fmt.Sprintf("selfcheck: checking the exercises as git's HEAD has them; %d files under %s differ or are not in git and are not checked (selfcheck --worktree checks the files as they are)", differ, dir), nil
}

// inChapters keeps the exercises of the named chapters (all: none named).
func inChapters(exs []*Exercise, chapters []string) ([]*Exercise, error) {
	if len(chapters) == 0 {
		return exs, nil
	}
	var picked []*Exercise
	for _, e := range exs {
		if slices.Contains(chapters, e.Chapter) {
			picked = append(picked, e)
		}
	}
	if len(picked) == 0 {
		return nil, fmt.Errorf("selfcheck: no exercises in %s", strings.Join(chapters, ", "))
	}
	return picked, nil
}

// fileProblems are what can be seen in e's files without running anything:
// hints, time, the checker's build tag, the doc sections it names, what
// load found damaged, and the task the stub and solution state.
func fileProblems(root, tmp string, e *Exercise) []string {
	var problems []string
	if len(e.Hints) == 0 {
		problems = append(problems, e.Name()+": hints.md has no '## ' hint")
	}
	if e.Minutes < 5 || e.Minutes > 15 {
		problems = append(problems, fmt.Sprintf("%s: %d minutes, outside 5-15", e.Name(), e.Minutes))
	}
	if b, err := os.ReadFile(filepath.Join(tmp, e.Path(), "check_test.go")); err != nil || !strings.HasPrefix(string(b), "//go:build "+checkTags+"\n") {
		problems = append(problems, e.Name()+": no check_test.go starting with //go:build "+checkTags+" (without the tag, go test ./... fails on the unsolved stub)")
	}
	if p := checkPractises(root, e); p != "" {
		problems = append(problems, e.Name()+": "+p)
	}
	for _, d := range e.Damage {
		problems = append(problems, e.Name()+": "+d)
	}
	if p := sameTask(tmp, e); p != "" {
		problems = append(problems, e.Name()+": "+p)
	}
	return problems
}

// selfcheckRun is one selfcheck's copy of the repository and the two
// directories where the answers test writes what each run rendered.
type selfcheckRun struct {
	tmp, stubAnswers, solAnswers string
	// trialBins are the checkers of the predict and investigate
	// exercises, built with their solutions in place by runSolutions,
	// which runs them, and run again by the trials.
	trialBins map[string]trialBinary
}

// selfcheckFlags: -count=1, a selfcheck must run the checkers, not
// remember them; -vet=off, go vet ./... and go vet -tags workshop cover
// them already; -ldflags=-s -w, no symbol table or DWARF, which makes
// linking the many test binaries markedly faster on two cores. go test's
// -p stays at its default, one package per core: the build of each
// package is CPU-bound, and on a loaded two-core machine four live-view
// checkers at once did not start their demo within their two minutes.
var selfcheckFlags = []string{"-count=1", "-vet=off", "-ldflags=-s -w"}

// prepareAnswers puts the answers test (answers.go) into every predict and
// investigate exercise and makes the directories its runs write into.
func (sc *selfcheckRun) prepareAnswers(exs []*Exercise) error {
	for _, d := range []string{sc.stubAnswers, sc.solAnswers} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	for _, e := range exs {
		if e.Kind != "build" {
			if err := writeAnswersTest(sc.tmp, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// runStubs runs every checker on its stub.
func (sc *selfcheckRun) runStubs(exs []*Exercise) (map[string]*Result, error) {
	return runCheckersEnv(sc.tmp, exs, []string{answersEnv + "=" + sc.stubAnswers}, selfcheckFlags...)
}

// runSolutions puts every solution over its stub and runs the checkers
// again. The checkers of the predict and investigate exercises are built
// once here (buildTrialBinaries), for the trials to run again, and run
// side by side from those binaries; the others (build exercises, and
// checkers of concurrent code, which run under -race) by go test.
func (sc *selfcheckRun) runSolutions(exs []*Exercise) (map[string]*Result, error) {
	var trialable, viaGoTest []*Exercise
	for _, e := range exs {
		if err := putSolution(sc.tmp, e); err != nil {
			return nil, err
		}
		if e.Kind != "build" && e.missing(sc.tmp) == "" {
			trialable = append(trialable, e)
		}
	}
	sc.trialBins = sc.buildTrialBinaries(trialable, filepath.Join(sc.tmp, "trial-bin"))
	env := []string{answersEnv + "=" + sc.solAnswers}
	direct := map[string]*Result{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, trialParallel))
	for _, e := range exs {
		b, ok := sc.trialBins[e.ImportPath()]
		if !ok || b.err != "" || concurrent(sc.tmp, e) {
			viaGoTest = append(viaGoTest, e)
			continue
		}
		tests, err := checkerTests(sc.tmp, e)
		if err != nil {
			viaGoTest = append(viaGoTest, e) // go test says so
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r := runBinary(b.path, filepath.Join(sc.tmp, e.Path()), append(tests, answersTest), timeoutFor(e), env)
			mu.Lock()
			direct[e.ImportPath()] = r
			mu.Unlock()
		}()
	}
	wg.Wait()
	results, err := runCheckersEnv(sc.tmp, viaGoTest, env, selfcheckFlags...)
	if err != nil {
		return nil, err
	}
	maps.Copy(results, direct)
	return results, nil
}

// runBinary runs a checker built by go test -c, in dir, as go test would
// with -run tests and -timeout: its result as goTest reads it.
func runBinary(bin, dir string, tests []string, timeout time.Duration, env []string) *Result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run", runPattern(tests), "-test.count=1", "-test.v", "-test.timeout", timeout.String())
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout = &limitedWriter{w: &out, n: 4 << 20}
	cmd.Stderr = cmd.Stdout
	err := cmd.Run()
	c := &collector{}
	c.add(out.String())
	r := &Result{Pass: err == nil}
	if !r.Pass {
		r.Output, r.Messages, r.TimedOut = c.result()
		if ctx.Err() != nil && !r.TimedOut {
			r.TimedOut = true
			r.Output = append(r.Output, fmt.Sprintf("the checker did not finish within %s", timeout))
		}
		if exited := new(exec.ExitError); !errors.As(err, &exited) && ctx.Err() == nil {
			r.Output = append(r.Output, "cannot run the checker: "+err.Error())
		}
	}
	return r
}

// stubProblems: a stub must compile, fail its checker, and let the checker
// finish; a build exercise's checker must not print the solution's code
// (read from the files, so called while the stub is still in place).
func (sc *selfcheckRun) stubProblems(e *Exercise, r *Result) []string {
	var problems []string
	switch {
	case r.BuildFailed:
		problems = append(problems, e.Name()+": the stub does not compile:\n      "+strings.Join(r.Output, "\n      "))
	case r.Pass:
		problems = append(problems, e.Name()+": the stub passes its checker (a checker must be able to fail)")
	case r.TimedOut:
		problems = append(problems, e.Name()+": the checker did not finish on the stub:\n      "+strings.Join(r.Output, "\n      "))
	case e.Kind == "build":
		for _, p := range codeLeaks(sc.tmp, e, append(r.Output, r.Messages...)) {
			problems = append(problems, e.Name()+": "+p)
		}
		// Hints lead; the solution's code is `solution NAME`'s.
		for i, h := range e.Hints {
			for _, p := range codeLeaks(sc.tmp, e, strings.Split(h, "\n")) {
				if strings.Contains(p, "shows a line") {
					problems = append(problems, fmt.Sprintf("%s: hint %d: %s", e.Name(), i+1, strings.Replace(p, "the checker's output", "it", 1)))
				}
			}
		}
	}
	return problems
}

// solutionProblems: a solution must pass its checker, and what the checker
// told the stub of a predict or investigate exercise must not give the
// solution's answer away.
func (sc *selfcheckRun) solutionProblems(e *Exercise, stub, sol *Result) []string {
	var problems []string
	if !sol.Pass {
		problems = append(problems, e.Name()+": the solution fails its checker:\n      "+strings.Join(sol.Output, "\n      "))
	}
	if e.Kind == "build" || stub.BuildFailed || stub.Pass {
		return problems
	}
	stubR, err1 := readRenderings(sc.stubAnswers, e)
	solR, err2 := readRenderings(sc.solAnswers, e)
	if err := errors.Join(err1, err2); err != nil {
		return append(problems, e.Name()+": "+err.Error())
	}
	for _, p := range predictionLeaks(stubR, solR, stub.Messages, stub.Output) {
		problems = append(problems, e.Name()+": "+p)
	}
	for _, p := range hintLeaks(e, taskOf(sc.tmp, e), stubR, solR) {
		problems = append(problems, e.Name()+": "+p)
	}
	return problems
}

// crossLeaks: no exercise's checker output carries another's answer
// (04-deltafifo/2-dedup's once printed what 04-deltafifo/1-pops asks to
// predict). Whole answers are looked for, and list entries long enough to
// be one exercise's (12 characters or more, not only letters).
func (sc *selfcheckRun) crossLeaks(exs []*Exercise, stubs map[string]*Result) []string {
	outputs := map[string]string{}
	for _, e := range exs {
		if r := stubs[e.ImportPath()]; r != nil && !r.BuildFailed {
			outputs[e.Name()] = strings.Join(r.Output, "\n") + "\n" + strings.Join(r.Messages, "\n")
		}
	}
	var problems []string
	for _, b := range exs {
		if b.Kind == "build" {
			continue
		}
		stubR, err1 := readRenderings(sc.stubAnswers, b)
		solR, err2 := readRenderings(sc.solAnswers, b)
		if err1 != nil || err2 != nil {
			continue
		}
		problems = append(problems, crossLeaksOf(b, stubR, solR, exs, outputs)...)
	}
	return problems
}

func crossLeaksOf(b *Exercise, stubR, solR map[string]rendering, exs []*Exercise, outputs map[string]string) []string {
	stubs := held(stubR)
	var problems []string
	for _, n := range slices.Sorted(maps.Keys(solR)) {
		a := solR[n]
		var toks []string
		for _, tok := range specific(a, stubs) {
			whole := tok == a.V || tok == a.PlusV || tok == a.SharpV || tok == a.Q
			if whole && (a.Kind != "string" || notJustLetters(a.V)) || !whole && len(strings.Trim(tok, `"`)) >= 12 {
				toks = append(toks, tok)
			}
		}
		for _, e := range exs {
			out, ok := outputs[e.Name()]
			if !ok || e == b {
				continue
			}
			for _, tok := range toks {
				if strings.Contains(out, tok) {
					problems = append(problems, fmt.Sprintf("%s: its checker's output gives %s's answer away (%s): %s", e.Name(), b.Name(), n, tok))
					break
				}
			}
		}
	}
	return problems
}

// hintLeaks: hints lead, and the last one is a strong nudge, not the
// answer (that is `solution NAME`). A hint must not hold a prediction's
// answer: a rendering specific enough to be looked for anywhere, or a
// number of two digits or more, or a CamelCase name, that the stub does not
// hold.
func hintLeaks(e *Exercise, task string, stub, sol map[string]rendering) []string {
	var problems []string
	stubs := held(stub)
	names := slices.Sorted(maps.Keys(sol))
	for i, h := range e.Hints {
		for _, n := range names {
			if s, ok := stub[n]; ok && s.SharpV == sol[n].SharpV {
				continue
			}
			toks := specific(sol[n], stubs)
			for _, p := range plain(sol[n]) {
				if len(p) >= 2 && (isNumber(p) || camel.MatchString(p)) && !stubs[p] {
					toks = append(toks, p)
				}
			}
			for _, tok := range toks {
				if containsWord(task, tok) {
					continue // the task names it: the hint may too
				}
				if containsWord(h, tok) || notJustLetters(tok) && strings.Contains(h, tok) {
					problems = append(problems, fmt.Sprintf("hint %d gives %s's answer away: %s", i+1, n, tok))
					break
				}
			}
		}
	}
	return problems
}

var camel = regexp.MustCompile(`^[A-Z][a-z]+[A-Z]`)

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}
