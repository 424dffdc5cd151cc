package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Exercise is one exercise as found on disk.
type Exercise struct {
	Chapter   string   // "01-store"
	Dir       string   // "1-bynode"
	Files     []string // edited files, relative to the exercise directory
	Title     string
	Kind      string // predict, build or investigate
	Minutes   int
	Needs     string // none, cluster, browser or viewer
	Practises string // docs section
	Hints     []string
	// Damage is what is wrong with the exercise's directory as found on
	// disk (an edited file deleted, its package clause or doc comment
	// broken, hints.md or check_test.go gone): the runner says so and
	// reset repairs it. The metadata comes from the solution, which is not
	// edited, so that damage to one exercise never breaks every command.
	Damage []string
	// Tests are the checker's test functions (check_test.go), the only
	// tests the runner runs; Concurrent marks a checker of concurrent
	// code (concurrentMark), run under -race and uncached.
	Tests      []string
	Concurrent bool
	// Star marks an exercise of the three-hour session: named in the
	// agenda of docs/workshop.md (agendaOrder).
	Star bool
}

// Name is <chapter>/<dir>, the NAME of the commands.
func (e *Exercise) Name() string { return e.Chapter + "/" + e.Dir }

// Path is the exercise's directory relative to the repository root.
func (e *Exercise) Path() string { return filepath.Join("workshop", "exercises", e.Chapter, e.Dir) }

// SolutionPath is the solution's directory relative to the repository root.
func (e *Exercise) SolutionPath() string {
	return filepath.Join("workshop", "solutions", e.Chapter, e.Dir)
}

// ImportPath is the exercise package's import path.
func (e *Exercise) ImportPath() string {
	return modulePath + "/workshop/exercises/" + e.Chapter + "/" + e.Dir
}

const modulePath = "github.com/informer-anatomy/informer-anatomy"

var metaLine = regexp.MustCompile(`(?m)^Kind: (\w+)\. Minutes: (\d+)\. Needs: (\w+)\. Practises: (.+)$`)

// Valid values of the metadata fields. Needs: viewer is a trace viewer
// (Jaeger), browser any web browser on the live view.
var (
	kinds = []string{"predict", "build", "investigate"}
	needs = []string{"none", "cluster", "browser", "viewer"}
)

// needsWhat is how the runner names what an exercise needs.
var needsWhat = map[string]string{"cluster": "a cluster", "browser": "a browser", "viewer": "a trace viewer"}

// load finds every exercise under root, in order: every directory of
// workshop/exercises and of workshop/solutions (where participants do
// not edit, so that an exercise whose directory was deleted is still
// found, damaged, and reset brings it back). A malformed exercise is an
// error: the course must not silently lose one.
func load(root string) ([]*Exercise, error) {
	base := filepath.Join(root, "workshop", "exercises")
	if _, err := os.Stat(base); err != nil {
		return nil, fmt.Errorf("no exercises: %w (run from inside the informer-anatomy checkout)", err)
	}
	chapters := subdirs(base, filepath.Join(root, "workshop", "solutions"))
	var out []*Exercise
	for _, ch := range chapters {
		dirs := subdirs(filepath.Join(base, ch), filepath.Join(root, "workshop", "solutions", ch))
		var exs []*Exercise
		for _, d := range dirs {
			e, err := loadOne(root, ch, d)
			if err != nil {
				return nil, fmt.Errorf("exercise %s/%s: %w", ch, d, err)
			}
			exs = append(exs, e)
		}
		slices.SortFunc(exs, func(a, b *Exercise) int { return number(a.Dir) - number(b.Dir) })
		out = append(out, exs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no exercises under %s", base)
	}
	return out, nil
}

// subdirs are the names of the directories in any of dirs, sorted, each
// once; a directory that does not exist has none.
func subdirs(dirs ...string) []string {
	var out []string
	for _, dir := range dirs {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.IsDir() && !slices.Contains(out, e.Name()) {
				out = append(out, e.Name())
			}
		}
	}
	slices.Sort(out)
	return out
}

// number is the n of "n-name" (0 when there is none).
func number(dir string) int {
	n, _ := strconv.Atoi(strings.SplitN(dir, "-", 2)[0])
	return n
}

func loadOne(root, chapter, dir string) (*Exercise, error) {
	e := &Exercise{Chapter: chapter, Dir: dir}
	sol, err := os.ReadDir(filepath.Join(root, e.SolutionPath()))
	if err != nil {
		return nil, fmt.Errorf("no solution directory %s", e.SolutionPath())
	}
	for _, f := range sol {
		if strings.HasSuffix(f.Name(), ".go") && !strings.HasSuffix(f.Name(), "_test.go") {
			e.Files = append(e.Files, f.Name())
		}
	}
	if len(e.Files) == 0 {
		return nil, fmt.Errorf("no solution files in %s", e.SolutionPath())
	}
	// The metadata is in the package doc comment of the first file, read
	// from the solution: the participant edits the stub, and a stub whose
	// doc comment was deleted must not stop the runner (reset included).
	doc, pkg, err := packageDoc(filepath.Join(root, e.SolutionPath(), e.Files[0]))
	if err != nil {
		return nil, err
	}
	m := metaLine.FindStringSubmatch(doc)
	if m == nil {
		return nil, fmt.Errorf("%s: no metadata line %q", e.Files[0], "Kind: … Minutes: … Needs: … Practises: …")
	}
	e.Kind, e.Needs, e.Practises = m[1], m[3], m[4]
	e.Minutes, _ = strconv.Atoi(m[2])
	if !slices.Contains(kinds, e.Kind) || !slices.Contains(needs, e.Needs) {
		return nil, fmt.Errorf("kind %q or needs %q not one of %v / %v", e.Kind, e.Needs, kinds, needs)
	}
	for _, line := range strings.Split(doc, "\n") {
		if t, ok := strings.CutPrefix(line, "# "); ok && e.Title == "" {
			e.Title = t
		}
	}
	if e.Title == "" {
		return nil, fmt.Errorf("%s: no '# Title' heading in the package doc", e.Files[0])
	}
	e.Damage = damage(root, e, doc, pkg)
	e.Tests, _ = checkerTests(root, e)
	e.Concurrent = concurrent(root, e)
	if hints, err := os.ReadFile(filepath.Join(root, e.Path(), "hints.md")); err == nil {
		e.Hints = parseHints(string(hints))
	}
	return e, nil
}

// packageDoc parses path's package clause and returns its doc comment and
// package name.
func packageDoc(path string) (doc, pkg string, err error) {
	pf, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		return "", "", err
	}
	if pf.Doc == nil {
		return "", pf.Name.Name, fmt.Errorf("%s has no package doc comment", filepath.Base(path))
	}
	return pf.Doc.Text(), pf.Name.Name, nil
}

// damage lists what is missing or broken in e's directory compared with
// what every exercise has: its edited files, each with the solution's
// package clause and (the first) the task as its doc comment, hints.md and
// check_test.go. Notes added to the task are not damage, and what the
// participant writes below the package clause is theirs: only the
// compiler judges it.
func damage(root string, e *Exercise, doc, pkg string) []string {
	if !fileExists(filepath.Join(root, e.Path())) {
		return []string{"its directory " + filepath.ToSlash(e.Path()) + " is missing"}
	}
	var out []string
	for i, f := range e.Files {
		path := filepath.Join(root, e.Path(), f)
		if !fileExists(path) {
			out = append(out, f+" is missing")
			continue
		}
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			out = append(out, f+" is a directory, not a file (reset moves it aside)")
			continue
		}
		d, p, err := packageDoc(path)
		switch {
		case p == "" && err != nil:
			out = append(out, fmt.Sprintf("%s: its package clause does not parse (%v)", f, err))
		case p != pkg:
			out = append(out, fmt.Sprintf("%s: package %s, want package %s", f, p, pkg))
		case i == 0 && err != nil:
			out = append(out, f+": its package doc comment (the task) is missing")
		case i == 0 && !metaLine.MatchString(d):
			out = append(out, f+": its package doc comment (the task) lost its Kind: … line")
		}
	}
	for _, f := range []string{"hints.md", "check_test.go"} {
		if !fileExists(filepath.Join(root, e.Path(), f)) {
			out = append(out, f+" is missing")
		}
	}
	return out
}

// missing names what of e's directory is missing for its checker to run
// at all (the directory, an edited file, check_test.go), or is "".
func (e *Exercise) missing(root string) string {
	for _, f := range append([]string{""}, append(e.Files, "check_test.go")...) {
		if !fileExists(filepath.Join(root, e.Path(), f)) {
			return filepath.ToSlash(filepath.Join(e.Path(), f)) + " is missing"
		}
	}
	return ""
}

// parseHints splits hints.md at its "## " headings; each section's text
// (without its heading) is a hint.
func parseHints(s string) []string {
	var out []string
	for _, sec := range strings.Split("\n"+s, "\n## ")[1:] {
		_, body, _ := strings.Cut(sec, "\n")
		if t := strings.TrimSpace(body); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// find resolves NAME: <chapter>/<dir>, <chapter>/<name without number>, or
// the part after the chapter alone when that is unique.
func find(exs []*Exercise, name string) (*Exercise, error) {
	name = strings.Trim(strings.TrimPrefix(filepath.ToSlash(name), "workshop/exercises/"), "/")
	var hits []*Exercise
	for _, e := range exs {
		short := strings.SplitN(e.Dir, "-", 2)[len(strings.SplitN(e.Dir, "-", 2))-1]
		switch name {
		case e.Name(), e.Chapter + "/" + short, e.Dir, short:
			hits = append(hits, e)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return nil, fmt.Errorf("no exercise %q (see `go run ./cmd/workshop list`)", name)
	}
	var names []string
	for _, h := range hits {
		names = append(names, h.Name())
	}
	return nil, fmt.Errorf("%q is ambiguous: %s", name, strings.Join(names, ", "))
}

// agendaPage is the participants' page, whose three-hour agenda sets the
// order the runner offers the exercises in.
const agendaPage = "docs/workshop.md"

// agendaRow is a row of the agenda's table: "| 0:10 | what | exercises |".
var agendaRow = regexp.MustCompile(`(?m)^\| (\d):(\d\d) \| [^|]+\| (.+) \|$`)

// agendaOrder is exs in the order a room does them: first the exercises
// of the three-hour session (marked Star), in the order the agenda of
// docs/workshop.md names them, then the others in reading order. The
// agenda is read from the page itself, so that the page and the runner
// cannot disagree (TestTheWorkshopPageAgreesWithTheExercises checks the
// page against the exercises). Without the page (a course copied without
// docs), or with no exercise named in it, the order is exs' own.
func agendaOrder(root string, exs []*Exercise) []*Exercise {
	b, err := os.ReadFile(filepath.Join(root, agendaPage))
	if err != nil {
		return exs
	}
	var out []*Exercise
	for _, m := range agendaRow.FindAllStringSubmatch(string(b), -1) {
		for _, n := range regexp.MustCompile("`([\\w./-]+)`").FindAllStringSubmatch(m[3], -1) {
			for _, e := range exs {
				if e.Name() == n[1] && !e.Star {
					e.Star = true
					out = append(out, e)
				}
			}
		}
	}
	for _, e := range exs {
		if !e.Star {
			out = append(out, e)
		}
	}
	return out
}
