package layers

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/informer-anatomy/informer-anatomy"

// The floors, bottom up. An import may point to a lower floor, or along
// its own floor where sameFloor lists it; nothing points up.
const (
	helpers  = 0  // internal/*: below the chapters
	probe    = 7  // liveprobe: above chapter 3, below dropin and the demo
	dropin   = 8  // dropin and its nested module dropin/crqueue
	demo     = 9  // demo and demo/*: the demo's parts
	programs = 10 // cmd/*, examples/**, workshop/**, test/*, hack/**
)

// chapter N's floor is N (1 to 6).

func floorName(f int) string {
	switch f {
	case helpers:
		return "helpers (internal/)"
	case probe:
		return "the probe (liveprobe/)"
	case dropin:
		return "dropin (dropin/)"
	case demo:
		return "the demo (demo/)"
	case programs:
		return "programs, examples, the workshop and the tests"
	}
	return fmt.Sprintf("chapter %d", f)
}

// folders puts every package of the repository, nested modules included,
// on one floor by its folder. A pattern is a folder, "dir/*" (one level
// below dir), "dir/**" (any depth below dir), or "chapters/0N-*". A
// package that no pattern names is an error: a new top folder needs a
// floor before it can import anything.
var folders = []struct {
	pattern string
	floor   int
}{
	{"internal/*", helpers},
	{"chapters/0N-*", 0}, // floor N
	{"liveprobe", probe},
	{"dropin", dropin},
	{"dropin/crqueue", dropin}, // a nested module of its own
	{"dropin/prometheus", dropin},
	{"demo", demo},
	{"demo/**", demo},
	{"cmd/*", programs},
	{"examples/**", programs}, // examples/controller-runtime is a nested module
	{"workshop/**", programs},
	{"test/*", programs},
	{"hack/**", programs}, // hack/etcd and hack/kube-apiserver are nested modules with no Go package of ours
}

// sameFloor lists every import allowed between two packages of one floor
// (tests' imports included), each once. A pattern on the left, "dir/**",
// stands for every package below dir. TestImportsPointDown fails on an
// import along a floor that is not here, and on an entry here that no
// import uses any more, so the list stays the house's real plan.
var sameFloor = map[string][]string{
	// helpers
	"internal/apiserver":  {"internal/kube"},
	"internal/kube":       {"internal/apiserver"},                                          // its tests run against the embedded server
	"internal/livepage":   {"internal/spancheck", "internal/testutil", "internal/tracing"}, // testutil: its tests read internal/tracing's names
	"internal/queuetrace": {"internal/handlerctx", "internal/tracing"},
	"internal/spancheck":  {"internal/tracing"},
	"internal/spantest":   {"internal/tracing"},
	"internal/tracing":    {"internal/testutil"}, // its tests read its own names
	// dropin
	"dropin/crqueue":    {"dropin"},
	"dropin/prometheus": {"dropin"},
	// the demo
	"demo/cluster":               {"demo", "demo/informers", "demo/liveview", "demo/result", "demo/telemetry", "demo/terminal"},
	"demo/demoproc":              {"demo/demoproc/demoproctest", "demo/liveview"}, // its tests
	"demo/demoproc/demoproctest": {"demo/demoproc"},
	"demo/lessons":               {"demo", "demo/informers", "demo/result", "demo/telemetry", "demo/terminal"},
	"demo/livecontrols":          {"demo", "demo/lessons", "demo/liveview", "demo/result", "demo/telemetry", "demo/terminal"},
	"demo/liveview":              {"demo/informers", "demo/telemetry"}, // its tests
	"demo/terminal":              {"demo/result", "demo/telemetry"},
	// programs, examples, the workshop and the tests
	"cmd/trace-demo":               {"test/doccheck"}, // its tests compare the docs' samples of its output with its runs
	"examples/clientgo-controller": {"examples/clientgo-controller/controller", "examples/internal/otelsetup"},
	"examples/controller-runtime":  {"examples/internal/metricsetup", "examples/internal/otelsetup"},
	"test/e2e":                     {"examples/clientgo-controller/controller"},
	"workshop/exercises/**":        {"workshop/kit", "workshop/kit/ctrlkit"},
	"workshop/kit/ctrlkit":         {"workshop/kit"},
	// the page exercise's program serves the participant's Mount
	"workshop/exercises/08-liveview/5-your-page/serve": {"workshop/exercises/08-liveview/5-your-page"},
}

// chapterDir is N for chapters/0N-name, N from 1 to 6.
func chapterDir(p string) (int, bool) {
	rest, ok := strings.CutPrefix(p, "chapters/0")
	if !ok || strings.Contains(rest, "/") || len(rest) < 3 || rest[1] != '-' {
		return 0, false
	}
	n, err := strconv.Atoi(rest[:1])
	return n, err == nil && n >= 1 && n <= 6
}

// match reports whether the folder p matches pattern.
func match(pattern, p string) bool {
	switch {
	case pattern == "chapters/0N-*":
		_, ok := chapterDir(p)
		return ok
	case strings.HasSuffix(pattern, "/**"):
		return strings.HasPrefix(p, strings.TrimSuffix(pattern, "**"))
	case strings.HasSuffix(pattern, "/*"):
		rest, ok := strings.CutPrefix(p, strings.TrimSuffix(pattern, "*"))
		return ok && rest != "" && !strings.Contains(rest, "/")
	}
	return pattern == p
}

// floorOf is p's floor; ok is false when no pattern places it.
func floorOf(p string) (floor int, ok bool) {
	for _, f := range folders {
		if match(f.pattern, p) {
			if n, isChapter := chapterDir(p); isChapter {
				return n, true
			}
			return f.floor, true
		}
	}
	return 0, false
}

// allowedAlong returns the sameFloor key that allows from → to, if any.
func allowedAlong(from, to string) (key string, ok bool) {
	for k, tos := range sameFloor {
		if match(k, from) && slices.Contains(tos, to) {
			return k, true
		}
	}
	return "", false
}

// check returns one line per package on no floor and per import that does
// not point down or along a listed edge; used records the sameFloor
// entries the imports use ("key → to").
func check(imports map[string][]string, used map[string]bool) []string {
	var bad []string
	froms := slices.Sorted(func(yield func(string) bool) {
		for k := range imports {
			if !yield(k) {
				return
			}
		}
	})
	for _, from := range froms {
		ff, ok := floorOf(from)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s is on no floor: add its folder to folders (test/layers, ARCHITECTURE.md)", from))
			continue
		}
		for _, to := range imports[from] {
			tf, ok := floorOf(to)
			switch {
			case !ok:
				bad = append(bad, fmt.Sprintf("%s imports %s, which is on no floor", from, to))
			case tf < ff:
			case tf == ff:
				if k, ok := allowedAlong(from, to); ok {
					if used != nil {
						used[k+" → "+to] = true
					}
					continue
				}
				bad = append(bad, fmt.Sprintf("%s imports %s along %s: not a listed same-floor edge (sameFloor)", from, to, floorName(ff)))
			default:
				bad = append(bad, fmt.Sprintf("%s, on the floor of %s, imports %s, on the floor of %s above it: imports point down", from, floorName(ff), to, floorName(tf)))
			}
		}
	}
	return bad
}

// repoImports reads every Go file of the repository, nested modules
// included, the way the go command would find packages (skipping testdata,
// vendor and folders starting with . or _), whatever its build tags (so
// e2e, browser and workshop files count), and returns, per package folder,
// the folders of this repository it imports. Parsing the files rather than
// asking go list reaches the nested modules too, whose dependencies need
// not be downloaded for this test.
func repoImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	imports := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		from := filepath.ToSlash(rel)
		if _, ok := imports[from]; !ok {
			imports[from] = nil
		}
		for _, s := range f.Imports {
			imp, _ := strconv.Unquote(s.Path.Value)
			to, ok := strings.CutPrefix(imp, module+"/")
			if ok && to != from && !slices.Contains(imports[from], to) {
				imports[from] = append(imports[from], to)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return imports
}

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}

// TestImportsPointDown: every package of the repository is on a floor,
// every import of one of its packages (tests' imports included) points to
// a lower floor or along a listed same-floor edge, and every listed edge
// is still used.
func TestImportsPointDown(t *testing.T) {
	imports := repoImports(t, repoRoot(t))
	var arrows int
	for _, tos := range imports {
		arrows += len(tos)
	}
	// A floor for the module's packages and the nested modules' (a sample
	// from each kind, so that a walk that missed a tree fails here).
	for _, p := range []string{"chapters/05-processor", "internal/tracing", "liveprobe", "dropin", "dropin/crqueue", "demo/lessons", "cmd/trace-demo", "examples/controller-runtime", "workshop/kit", "test/e2e", "test/layers"} {
		if _, ok := imports[p]; !ok {
			t.Errorf("the walk did not find package %s", p)
		}
	}
	if arrows < 300 {
		t.Fatalf("only %d imports found: did the walk see the repository?", arrows)
	}
	used := map[string]bool{}
	for _, line := range check(imports, used) {
		t.Error(line)
	}
	for k, tos := range sameFloor {
		for _, to := range tos {
			if !used[k+" → "+to] {
				t.Errorf("sameFloor lists %s → %s, which no import uses: remove it", k, to)
			}
		}
	}
	t.Logf("%d packages, %d imports of the repository's own packages checked", len(imports), arrows)
}

// TestViolationsCatchWrongImports feeds check imports that break the plan,
// one each, and some that keep it: the test above can only pass on the
// real tree if it would fail on these.
func TestViolationsCatchWrongImports(t *testing.T) {
	for _, c := range []struct {
		from, to string
		want     string // "" for an allowed import
	}{
		{"dropin", "demo/lessons", "imports point down"},
		{"dropin", "demo", "imports point down"},
		{"dropin/crqueue", "demo/liveview", "imports point down"},
		{"chapters/03-reflector", "chapters/05-processor", "imports point down"},
		{"chapters/05-processor", "dropin", "imports point down"},
		{"chapters/06-factory", "liveprobe", "imports point down"},
		{"internal/tracing", "chapters/01-store", "imports point down"},
		{"internal/livepage", "liveprobe", "imports point down"},
		{"liveprobe", "demo/liveview", "imports point down"},
		{"demo/lessons", "cmd/trace-demo", "imports point down"},
		{"demo/terminal", "demo/lessons", "not a listed same-floor edge"},
		{"demo/lessons", "demo/liveview", "not a listed same-floor edge"},
		{"demo/cluster", "demo/lessons", "not a listed same-floor edge"},
		{"internal/tracing", "internal/spancheck", "not a listed same-floor edge"},
		{"dropin", "dropin/crqueue", "not a listed same-floor edge"},
		{"workshop/kit", "workshop/solutions/01-store/1-bynode", "not a listed same-floor edge"},
		{"newtop/x", "internal/tracing", "is on no floor"},
		{"demo/lessons", "newtop/x", "which is on no floor"},
		{"chapters/07-extra", "chapters/01-store", "is on no floor"},
		{"chapters/06-factory", "chapters/05-processor", ""},
		{"dropin", "liveprobe", ""},
		{"demo/lessons", "dropin", ""},
		{"demo/lessons", "demo/terminal", ""},
		{"workshop/exercises/05-processor/1-slow-listener", "workshop/kit", ""},
		{"examples/controller-runtime", "dropin/crqueue", ""},
		{"test/layers", "internal/tracing", ""},
	} {
		bad := check(map[string][]string{c.from: {c.to}}, nil)
		switch {
		case c.want == "" && len(bad) > 0:
			t.Errorf("%s → %s is allowed, but check says %q", c.from, c.to, bad)
		case c.want != "" && (len(bad) != 1 || !strings.Contains(bad[0], c.want)):
			t.Errorf("%s → %s: check says %q, want one line containing %q", c.from, c.to, bad, c.want)
		}
	}
}

// Every pattern places what it says and nothing more: the floors in
// ARCHITECTURE.md are these.
func TestFloorOf(t *testing.T) {
	for p, want := range map[string]int{
		"internal/tracing":                     helpers,
		"chapters/01-store":                    1,
		"chapters/06-factory":                  6,
		"liveprobe":                            probe,
		"dropin":                               dropin,
		"dropin/crqueue":                       dropin,
		"demo":                                 demo,
		"demo/demoproc/demoproctest":           demo,
		"cmd/trace-demo":                       programs,
		"examples/internal/otelsetup":          programs,
		"workshop/exercises/01-store/1-bynode": programs,
		"test/layers":                          programs,
		"hack/benchtable":                      programs,
	} {
		if got, ok := floorOf(p); !ok || got != want {
			t.Errorf("floorOf(%s) = %d, %v; want %d", p, got, ok, want)
		}
	}
	for _, p := range []string{"internal/x/y", "dropin/other", "chapters/01-store/sub", "test/e2e/sub", "cmd", "liveprobe/sub", "x"} {
		if f, ok := floorOf(p); ok {
			t.Errorf("floorOf(%s) = %d: no pattern should place it", p, f)
		}
	}
}
