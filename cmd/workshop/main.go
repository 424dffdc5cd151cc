package main

import (
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

const usage = `usage: go run ./cmd/workshop [command] [--all|--browser] [NAME...]

  (no command)    check chapter by chapter and show the first unsolved exercise
  NAME            check that exercise only, and show it
  list            every exercise with ✓/✗, kind and minutes
  watch [NAME]    rerun the current exercise (or NAME) whenever a file is saved
  hint [NAME]     the next hint of NAME (default: the current exercise)
  solution NAME   the reference solution
  reset NAME      the exercise back as shipped; your version is kept as a backup
  verify [NAME...]
                  those exercises' checkers (default: every one); exit 0 only
                  when all of them pass
  warm            build everything once
  selfcheck [--worktree] [CHAPTER...]
                  for CI: every stub (as git's HEAD has it; --worktree: as
                  the files are) fails its checker without giving the
                  answer away or yielding to trial, every solution passes
                  (only those chapters' exercises, when named)

  --all           include exercises that need a cluster, a browser or a
                  trace viewer
  --browser       include exercises that need a browser (the live view's)

NAME is <chapter>/<exercise>, e.g. 01-store/1-bynode, or a unique part:
01-store/bynode, bynode.`

// commands are the command words; any other first word is a NAME.
var commands = []string{"list", "watch", "hint", "solution", "reset", "verify", "warm", "selfcheck"}

// run is the whole command line, for main and for the tests.
func run(root string, args []string, out io.Writer) error {
	inv, help := parseArgs(args)
	if help {
		fmt.Fprintln(out, usage)
		return nil
	}
	if inv.cmd == "selfcheck" {
		// selfcheck loads the course from its own temporary copy.
		return selfcheck(root, inv.rest, out)
	}
	exs, err := load(root)
	if err != nil {
		return err
	}
	inv.exs = agendaOrder(root, exs)
	return inv.dispatch(root, out)
}

// invocation is one command line, parsed: the command word ("" for none),
// the Needs values included besides "none", the words after the command,
// and (once loaded) the course's exercises.
type invocation struct {
	cmd   string
	needs []string
	rest  []string
	exs   []*Exercise
}

// parseArgs separates the flags from the command and its words; help is
// true when usage was asked for.
func parseArgs(args []string) (inv invocation, help bool) {
	for _, a := range args {
		switch a {
		case "--all", "-all":
			inv.needs = []string{"cluster", "browser", "viewer"}
		case "--browser", "-browser":
			if len(inv.needs) == 0 {
				inv.needs = []string{"browser"}
			}
		case "-h", "--help", "help":
			return inv, true
		default:
			inv.rest = append(inv.rest, a)
		}
	}
	if len(inv.rest) > 0 && slices.Contains(commands, inv.rest[0]) {
		inv.cmd, inv.rest = inv.rest[0], inv.rest[1:]
	}
	return inv, false
}

// oneName is the exercise named by the command's one word.
func (inv *invocation) oneName() (*Exercise, error) {
	if len(inv.rest) != 1 {
		return nil, fmt.Errorf("%s needs one NAME, e.g. %s", inv.cmd, inv.exs[0].Name())
	}
	return find(inv.exs, inv.rest[0])
}

// named is the exercises the command's words name, each once, in order.
// A single unknown word without a command may be a mistyped command, and
// the error says so.
func (inv *invocation) named() ([]*Exercise, error) {
	var picked []*Exercise
	for _, n := range inv.rest {
		e, err := find(inv.exs, n)
		if err != nil {
			if inv.cmd == "" && len(inv.rest) == 1 && !strings.Contains(n, "/") {
				return nil, fmt.Errorf("%v, and no command %q\n%s", err, n, usage)
			}
			return nil, err
		}
		if !slices.Contains(picked, e) {
			picked = append(picked, e)
		}
	}
	return picked, nil
}

// dispatch runs the command.
func (inv *invocation) dispatch(root string, out io.Writer) error {
	exs, needs := inv.exs, inv.needs
	switch inv.cmd {
	case "":
		if len(inv.rest) == 0 {
			return next(root, exs, needs, out)
		}
		picked, err := inv.named()
		if err != nil {
			return err
		}
		_, err = show(root, exs, picked, out)
		return err
	case "list":
		return list(root, exs, needs, out)
	case "watch":
		var e *Exercise
		if len(inv.rest) > 0 {
			var err error
			if e, err = inv.oneName(); err != nil {
				return err
			}
		}
		return watch(root, exs, needs, e, out)
	case "hint":
		var e *Exercise
		var err error
		if len(inv.rest) == 0 {
			e, _, _, err = current(root, exs, needs)
		} else {
			e, err = inv.oneName()
		}
		if err != nil {
			return err
		}
		return hint(root, e, out)
	case "solution", "reset":
		e, err := inv.oneName()
		if err != nil {
			return err
		}
		if inv.cmd == "reset" {
			return reset(root, e, out)
		}
		return solution(root, e, out)
	case "verify":
		if len(inv.rest) == 0 {
			return verify(root, exs, needs, out)
		}
		picked, err := inv.named()
		if err != nil {
			return err
		}
		return verifyThese(root, exs, picked, out)
	case "warm":
		return warm(root, exs, out)
	}
	return fmt.Errorf("unknown command %q\n%s", inv.cmd, usage)
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

// current is the first unsolved exercise, in exs' order (the agenda's:
// agendaOrder), or nil when all are solved, with the checker results it
// ran. It checks a run of exercises of one chapter at a time, in order,
// and stops at the first run with an unsolved exercise: results are
// served from the runner's cache when nothing they depend on changed
// (cachedCheckers), so this costs about one chapter's checkers.
func current(root string, exs []*Exercise, needs []string) (*Exercise, map[string]*Result, int, error) {
	inc := included(exs, needs)
	solved := 0
	for start := 0; start < len(inc); {
		end := start
		for end < len(inc) && inc[end].Chapter == inc[start].Chapter && inc[end].Star == inc[start].Star {
			end++
		}
		res, err := cachedCheckers(root, inc[start:end])
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
		if x.Name() == e.Name() { // watch reloads e: the same exercise, another value
			i = j + 1
		}
	}
	if i > 0 {
		fmt.Fprintf(out, "Exercise %d of %d: %s — %s\n", i, len(exs), e.Name(), e.Title)
	} else {
		fmt.Fprintf(out, "Exercise %s — %s\n", e.Name(), e.Title)
	}
	fmt.Fprintf(out, "  %s, about %d minutes", e.Kind, e.Minutes)
	if e.Needs != "none" {
		fmt.Fprintf(out, ", needs %s", needsWhat[e.Needs])
	}
	fmt.Fprintf(out, "; practises %s\n", e.Practises)
	for _, f := range e.Files {
		fmt.Fprintf(out, "  edit: %s\n", filepath.ToSlash(filepath.Join(e.Path(), f)))
	}
}

// report says what e's checker said, and where to go next: the next
// hint (or the solution, when every hint has been shown), or reset when
// the exercise's directory is damaged.
func report(out io.Writer, root string, e *Exercise, r *Result) {
	for _, d := range e.Damage {
		fmt.Fprintf(out, "  ! %s\n", d)
	}
	if len(e.Damage) > 0 {
		fmt.Fprintf(out, "  (`go run ./cmd/workshop reset %s` repairs it, and keeps your version as a backup)\n", e.Name())
	}
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
	p, note := loadProgress(root)
	if note != "" {
		fmt.Fprintf(out, "  (%s)\n", note)
	}
	shown := p.Hints[e.Name()]
	switch {
	case len(e.Hints) == 0:
		fmt.Fprintf(out, "  (the task is in the file's doc comment; by hand: %s)\n", goCommand(e))
	case shown < len(e.Hints):
		fmt.Fprintf(out, "  (the task is in the file's doc comment; next hint, %d of %d: go run ./cmd/workshop hint %s; by hand: %s)\n",
			shown+1, len(e.Hints), e.Name(), goCommand(e))
	default:
		fmt.Fprintf(out, "  (all %d hints shown; the solution: go run ./cmd/workshop solution %s; by hand: %s)\n", len(e.Hints), e.Name(), goCommand(e))
	}
}

// show checks the named exercises, whatever they need (naming one is
// asking for it), and shows each with what its checker said.
func show(root string, exs, picked []*Exercise, out io.Writer) (map[string]*Result, error) {
	res, err := runCheckers(root, picked)
	if err != nil {
		return nil, err
	}
	for i, e := range picked {
		if i > 0 {
			fmt.Fprintln(out)
		}
		header(out, exs, e)
		report(out, root, e, res[e.ImportPath()])
	}
	return res, nil
}

// verifyThese is verify NAME...: only those checkers, each reported in
// full; exit status 1 unless all pass.
func verifyThese(root string, exs, picked []*Exercise, out io.Writer) error {
	res, err := show(root, exs, picked, out)
	if err != nil {
		return err
	}
	failed := 0
	for _, e := range picked {
		if !res[e.ImportPath()].Pass {
			failed++
		}
	}
	fmt.Fprintf(out, "\n%d of %d solved\n", len(picked)-failed, len(picked))
	if failed > 0 {
		return quietError{fmt.Sprintf("%d unsolved", failed)}
	}
	return nil
}

func next(root string, exs []*Exercise, needs []string, out io.Writer) error {
	inc := included(exs, needs)
	e, res, solved, err := current(root, exs, needs)
	if err != nil {
		return err
	}
	if e != nil {
		fmt.Fprintf(out, "%d of %d solved.\n\n", solved, len(inc))
		header(out, exs, e) // numbered in the whole course, as every command numbers it
		report(out, root, e, res[e.ImportPath()])
		return nil
	}
	fmt.Fprintf(out, "All %d exercises solved.", len(inc))
	if len(inc) < len(exs) {
		fmt.Fprintf(out, " %d more need a cluster, a browser or a trace viewer: go run ./cmd/workshop list --all (or --browser)", len(exs)-len(inc))
	}
	fmt.Fprintln(out)
	return nil
}

// list shows every exercise with its result, in exs' order (the agenda's:
// the three-hour session's first, then the rest by chapter).
func list(root string, exs []*Exercise, needs []string, out io.Writer) error {
	res, err := cachedCheckers(root, included(exs, needs))
	if err != nil {
		return err
	}
	chapter, solved, counted := "", 0, 0
	for i, e := range exs {
		switch {
		case e.Star && i == 0:
			fmt.Fprintln(out, "★ the three-hour session (docs/workshop.md), in its order")
		case !e.Star && e.Chapter != chapter:
			chapter = e.Chapter
			fmt.Fprintf(out, "%s\n", chapter)
		}
		dir := e.Dir
		if e.Star {
			dir = e.Name()
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
			needs = "  [needs " + needsWhat[e.Needs] + "]"
		}
		if len(e.Damage) > 0 {
			needs += "  [damaged: reset " + e.Name() + "]"
		}
		fmt.Fprintf(out, "  %s %-28s %-11s %2d min  %s%s\n", mark, dir, e.Kind, e.Minutes, e.Title, needs)
	}
	fmt.Fprintf(out, "%d of %d solved", solved, counted)
	if counted < len(exs) {
		fmt.Fprintf(out, " (- : needs a cluster, a browser or a trace viewer, not checked; add --all, or --browser for the browser ones)")
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

func solution(root string, e *Exercise, out io.Writer) error {
	for _, f := range e.Files {
		path := filepath.Join(e.SolutionPath(), f)
		b, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "// ===== %s (copy over %s)\n%s\n", filepath.ToSlash(path), filepath.ToSlash(filepath.Join(e.Path(), f)), b)
	}
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

// relPath is path relative to root, with slashes, for printing.
func relPath(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return filepath.ToSlash(r)
	}
	return path
}

// gitFiles lists the files git has under dir at rev.
func gitFiles(root, rev, dir string) ([]string, error) {
	cmd := exec.Command("git", "ls-tree", "-r", "-z", "--name-only", rev, "--", filepath.ToSlash(dir)+"/")
	cmd.Dir = root
	b, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range strings.Split(string(b), "\x00") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out, nil
}

func gitShow(root, rev, rel string) ([]byte, error) {
	cmd := exec.Command("git", "show", rev+":"+rel)
	cmd.Dir = root
	return cmd.Output()
}

// warmSteps are the go commands warm runs: they compile every package of
// the module, and every checker with its exercise, into the build cache,
// and link nothing. It used to run go build ./... and go test -run '^$'
// over workshop/...: the same compiling, and then 5 commands and 46 test
// binaries linked only to be thrown away, for linking is the one step the
// build cache does not keep (about 3 s a binary on two idle cores, 16
// minutes in all on a machine at load 25). go list -export compiles a
// package to get its export data, and -test adds the checkers' test
// variants of the exercise packages. A checker is linked when it first
// runs; list keeps its result (cache.go).
var warmSteps = [][]string{
	{"list", "-export", "-deps", "./..."},
	{"list", "-export", "-deps", "-test", "-tags", checkTags, "./workshop/..."},
}

func warm(root string, exs []*Exercise, out io.Writer) error {
	start := time.Now()
	fmt.Fprintln(out, "Compiling the chapters, the kit and every checker into Go's build cache (with an empty cache, many minutes: see docs/workshop.md)…")
	for _, step := range warmSteps {
		args := append(append([]string{step[0]}, copyFlags...), step[1:]...)
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
// when it is solved. With an exercise named, it watches that one until it
// is solved.
func watch(root string, exs []*Exercise, needs []string, named *Exercise, out io.Writer) error {
	for {
		e := named
		if e == nil {
			var err error
			if e, _, _, err = current(root, exs, needs); err != nil {
				return err
			}
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
			header(out, exs, e)
			report(out, root, e, res[e.ImportPath()])
			if res[e.ImportPath()].Pass {
				break
			}
			fmt.Fprintln(out, "  … waiting for you to save a file (Ctrl-C to stop)")
			waitForChange(filepath.Join(root, e.Path()))
			if fresh, err := loadOne(root, e.Chapter, e.Dir); err == nil {
				fresh.Star = e.Star
				e = fresh // its damage may have been repaired, or done
			}
		}
		if named != nil {
			return nil
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
