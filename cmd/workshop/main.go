package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	root, err := findRoot()
	if err == nil {
		err = run(root, os.Args[1:], os.Stdout)
	}
	if err != nil {
		var q quietError
		if !errors.As(err, &q) {
			fmt.Fprintln(os.Stderr, "workshop:", err)
		}
		os.Exit(1)
	}
}

// quietError fails the command after it has already said why.
type quietError struct{ msg string }

func (q quietError) Error() string { return q.msg }

// findRoot walks up from the working directory to the module's go.mod.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module "+modulePath) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("not inside the informer-anatomy checkout (no go.mod of %s above here)", modulePath)
		}
		dir = parent
	}
}

const usage = `usage: go run ./cmd/workshop [command] [--all|--browser] [NAME]

  (no command)    run the next unsolved exercise
  list            every exercise with ✓/✗, kind and minutes
  watch           rerun the current exercise whenever a file is saved
  hint [NAME]     the next hint of NAME (default: the current exercise)
  solution NAME   the reference solution
  reset NAME      the exercise back as shipped
  verify          every checker; exit 0 only when all are solved
  warm            build everything once
  selfcheck [CHAPTER...]
                  for CI: every stub fails its checker, every solution passes
                  (only those chapters' exercises, when named)

  --all           include exercises that need a cluster or a browser
  --browser       include exercises that need a browser (not a cluster)`

// run is the whole command line, for main and for the tests.
func run(root string, args []string, out io.Writer) error {
	// needs: the Needs values included besides "none".
	var needs []string
	var rest []string
	for _, a := range args {
		switch a {
		case "--all", "-all":
			needs = []string{"cluster", "browser"}
		case "--browser", "-browser":
			if len(needs) == 0 {
				needs = []string{"browser"}
			}
		case "-h", "--help", "help":
			fmt.Fprintln(out, usage)
			return nil
		default:
			rest = append(rest, a)
		}
	}
	cmd := ""
	if len(rest) > 0 {
		cmd, rest = rest[0], rest[1:]
	}
	exs, err := load(root)
	if err != nil {
		return err
	}
	needName := func() (*Exercise, error) {
		if len(rest) != 1 {
			return nil, fmt.Errorf("%s needs one NAME, e.g. %s", cmd, exs[0].Name())
		}
		return find(exs, rest[0])
	}
	switch cmd {
	case "":
		return next(root, exs, needs, out)
	case "list":
		return list(root, exs, needs, out)
	case "watch":
		return watch(root, exs, needs, out)
	case "hint":
		var e *Exercise
		if len(rest) == 0 {
			e, _, _, err = current(root, exs, needs)
		} else {
			e, err = needName()
		}
		if err != nil {
			return err
		}
		return hint(root, e, out)
	case "solution":
		e, err := needName()
		if err != nil {
			return err
		}
		return solution(root, e, out)
	case "reset":
		e, err := needName()
		if err != nil {
			return err
		}
		return reset(root, e, out)
	case "verify":
		return verify(root, exs, needs, out)
	case "warm":
		return warm(root, exs, out)
	case "selfcheck":
		return selfcheck(root, rest, out)
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

// included is the exercises the participant is asked to do: those that
// need nothing, and those whose Needs is in needs (--all, --browser).
func included(exs []*Exercise, needs []string) []*Exercise {
	var out []*Exercise
	for _, e := range exs {
		if e.Needs == "none" || slices.Contains(needs, e.Needs) {
			out = append(out, e)
		}
	}
	return out
}

// current is the first unsolved exercise, or nil when all are solved, with
// the checker results it ran. It checks a chapter at a time, in order, and
// stops at the first chapter with an unsolved exercise: solved checkers are
// served from go test's cache, so this costs about one chapter's checkers.
func current(root string, exs []*Exercise, needs []string) (*Exercise, map[string]*Result, int, error) {
	inc := included(exs, needs)
	solved := 0
	for start := 0; start < len(inc); {
		end := start
		for end < len(inc) && inc[end].Chapter == inc[start].Chapter {
			end++
		}
		res, err := runCheckers(root, inc[start:end])
		if err != nil {
			return nil, nil, 0, err
		}
		for _, e := range inc[start:end] {
			if !res[e.ImportPath()].Pass {
				return e, res, solved, nil
			}
			solved++
		}
		start = end
	}
	return nil, nil, solved, nil
}

func header(out io.Writer, exs []*Exercise, e *Exercise) {
	i := 0
	for j, x := range exs {
		if x == e {
			i = j + 1
		}
	}
	fmt.Fprintf(out, "Exercise %d of %d: %s — %s\n", i, len(exs), e.Name(), e.Title)
	fmt.Fprintf(out, "  %s, about %d minutes", e.Kind, e.Minutes)
	if e.Needs != "none" {
		fmt.Fprintf(out, ", needs a %s", e.Needs)
	}
	fmt.Fprintf(out, "; practises %s\n", e.Practises)
	for _, f := range e.Files {
		fmt.Fprintf(out, "  edit: %s\n", filepath.ToSlash(filepath.Join(e.Path(), f)))
	}
}

func report(out io.Writer, e *Exercise, r *Result) {
	switch {
	case r.Pass:
		fmt.Fprintln(out, "  ✓ solved")
		return
	case r.BuildFailed:
		fmt.Fprintln(out, "  ✗ does not compile:")
	default:
		fmt.Fprintln(out, "  ✗ not yet:")
	}
	for _, l := range r.Output {
		fmt.Fprintln(out, "    "+l)
	}
	fmt.Fprintf(out, "  (the task is in the file's doc comment; `go run ./cmd/workshop hint` for a hint; by hand: %s)\n", goCommand(e))
}

func next(root string, exs []*Exercise, needs []string, out io.Writer) error {
	inc := included(exs, needs)
	e, res, solved, err := current(root, exs, needs)
	if err != nil {
		return err
	}
	if e != nil {
		fmt.Fprintf(out, "%d of %d solved.\n\n", solved, len(inc))
		header(out, inc, e)
		report(out, e, res[e.ImportPath()])
		return nil
	}
	fmt.Fprintf(out, "All %d exercises solved.", len(inc))
	if len(inc) < len(exs) {
		fmt.Fprintf(out, " %d more need a cluster or a browser: go run ./cmd/workshop list --all (or --browser)", len(exs)-len(inc))
	}
	fmt.Fprintln(out)
	return nil
}

func list(root string, exs []*Exercise, needs []string, out io.Writer) error {
	res, err := runCheckers(root, included(exs, needs))
	if err != nil {
		return err
	}
	chapter, solved, counted := "", 0, 0
	for _, e := range exs {
		if e.Chapter != chapter {
			chapter = e.Chapter
			fmt.Fprintf(out, "%s\n", chapter)
		}
		mark := "-"
		if r, ok := res[e.ImportPath()]; ok {
			counted++
			mark = "✗"
			if r.Pass {
				mark = "✓"
				solved++
			}
		}
		needs := ""
		if e.Needs != "none" {
			needs = "  [needs " + e.Needs + "]"
		}
		fmt.Fprintf(out, "  %s %-28s %-11s %2d min  %s%s\n", mark, e.Dir, e.Kind, e.Minutes, e.Title, needs)
	}
	fmt.Fprintf(out, "%d of %d solved", solved, counted)
	if counted < len(exs) {
		fmt.Fprintf(out, " (- : needs a cluster or a browser, not checked; add --all, or --browser for the browser ones)")
	}
	fmt.Fprintln(out)
	return nil
}

func verify(root string, exs []*Exercise, needs []string, out io.Writer) error {
	inc := included(exs, needs)
	res, err := runCheckers(root, inc)
	if err != nil {
		return err
	}
	failed := 0
	for _, e := range inc {
		if r := res[e.ImportPath()]; !r.Pass {
			failed++
			fmt.Fprintf(out, "✗ %s — %s\n", e.Name(), e.Title)
		}
	}
	fmt.Fprintf(out, "%d of %d solved\n", len(inc)-failed, len(inc))
	if failed > 0 {
		return quietError{fmt.Sprintf("%d unsolved", failed)}
	}
	return nil
}

// progress is workshop/.progress.json: hints shown so far, per exercise.
type progress struct {
	Hints map[string]int `json:"hints"`
}

func progressPath(root string) string { return filepath.Join(root, "workshop", ".progress.json") }

func loadProgress(root string) progress {
	p := progress{Hints: map[string]int{}}
	if b, err := os.ReadFile(progressPath(root)); err == nil {
		_ = json.Unmarshal(b, &p)
		if p.Hints == nil {
			p.Hints = map[string]int{}
		}
	}
	return p
}

func hint(root string, e *Exercise, out io.Writer) error {
	if e == nil {
		fmt.Fprintln(out, "Everything is solved: no hint needed.")
		return nil
	}
	p := loadProgress(root)
	n := p.Hints[e.Name()]
	if n >= len(e.Hints) {
		fmt.Fprintf(out, "%s: all %d hints shown already; the last one again:\n\n%s\n\n(the solution: go run ./cmd/workshop solution %s)\n", e.Name(), len(e.Hints), e.Hints[len(e.Hints)-1], e.Name())
		return nil
	}
	fmt.Fprintf(out, "%s — hint %d of %d:\n\n%s\n", e.Name(), n+1, len(e.Hints), e.Hints[n])
	p.Hints[e.Name()] = n + 1
	b, _ := json.MarshalIndent(p, "", "  ")
	return os.WriteFile(progressPath(root), append(b, '\n'), 0o644)
}

func solution(root string, e *Exercise, out io.Writer) error {
	for _, f := range e.Files {
		path := filepath.Join(e.SolutionPath(), f)
		b, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "// ===== %s (copy over %s)\n%s\n", filepath.ToSlash(path), filepath.ToSlash(filepath.Join(e.Path(), f)), b)
	}
	fmt.Fprintf(out, "The explanation is in docs/workshop.md, answer key, %s.\n", e.Name())
	return nil
}

// shippedRevision is the revision reset restores from: the branch this
// checkout tracks (on a clone, the course as published, origin/main) when
// there is one, so that a participant who committed their own work still
// gets the stub back; otherwise HEAD.
func shippedRevision(root string) string {
	for _, rev := range []string{"@{upstream}", "origin/HEAD"} {
		cmd := exec.Command("git", "rev-parse", "--verify", "--quiet", rev)
		cmd.Dir = root
		if cmd.Run() == nil {
			return rev
		}
	}
	return "HEAD"
}

func reset(root string, e *Exercise, out io.Writer) error {
	rev := shippedRevision(root)
	for _, f := range e.Files {
		rel := filepath.ToSlash(filepath.Join(e.Path(), f))
		from := rev
		b, err := gitShow(root, from, rel)
		if err != nil && from != "HEAD" {
			// An exercise added in this checkout and not yet on the
			// tracked branch (a course author's) is restored from HEAD.
			from = "HEAD"
			b, err = gitShow(root, from, rel)
		}
		if err != nil {
			return fmt.Errorf("cannot read %s from git %s (reset needs a git checkout): %v", rel, rev, err)
		}
		if err := os.WriteFile(filepath.Join(root, rel), b, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s is back as shipped (from git %s).\n", rel, from)
	}
	return nil
}

func gitShow(root, rev, rel string) ([]byte, error) {
	cmd := exec.Command("git", "show", rev+":"+rel)
	cmd.Dir = root
	return cmd.Output()
}

func warm(root string, exs []*Exercise, out io.Writer) error {
	start := time.Now()
	fmt.Fprintln(out, "Building the chapters, the kit and every checker (the first time takes a minute or two)…")
	for _, args := range [][]string{{"build", "./..."}, {"test", "-tags", checkTags, "-count=1", "-run", "^$", "./workshop/..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		cmd.Stdout, cmd.Stderr = io.Discard, out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
		}
	}
	fmt.Fprintf(out, "Ready in %s: %d exercises. Start with: go run ./cmd/workshop\n", time.Since(start).Round(time.Second), len(exs))
	return nil
}

// watch reruns the current exercise whenever a file of its directory
// changes (polling modification times: no new dependency), and moves on
// when it is solved.
func watch(root string, exs []*Exercise, needs []string, out io.Writer) error {
	for {
		e, _, _, err := current(root, exs, needs)
		if err != nil {
			return err
		}
		if e == nil {
			fmt.Fprintln(out, "All exercises solved.")
			return nil
		}
		for {
			res, err := runCheckers(root, []*Exercise{e})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "\n[%s]\n", time.Now().Format("15:04:05"))
			header(out, included(exs, needs), e)
			report(out, e, res[e.ImportPath()])
			if res[e.ImportPath()].Pass {
				break
			}
			fmt.Fprintln(out, "  … waiting for you to save a file (Ctrl-C to stop)")
			waitForChange(filepath.Join(root, e.Path()))
		}
	}
}

func waitForChange(dir string) {
	stamp := func() string {
		var b strings.Builder
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if info, err := d.Info(); err == nil {
					fmt.Fprintf(&b, "%s %d %d\n", p, info.ModTime().UnixNano(), info.Size())
				}
			}
			return nil
		})
		return b.String()
	}
	before := stamp()
	for stamp() == before {
		time.Sleep(500 * time.Millisecond)
	}
}
