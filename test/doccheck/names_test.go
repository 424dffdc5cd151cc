package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// allowedNames are backticked names the docs use on purpose although no
// code declares them, each with the reason. An entry no doc uses any more,
// or that now resolves, fails the test: the list cannot rot.
var allowedNames = map[string]string{
	"NotOlderThan":                               "a query parameter's value (resourceVersionMatch=NotOlderThan), as the request carries it",
	"KUBE_FEATURE_WatchListClient":               "an environment variable (client-go's feature gates read KUBE_FEATURE_<gate>)",
	"filters.WithAuthenticationAndAuthorization": "controller-runtime v0.25.2's pkg/metrics/filters (kubebuilder's scaffold), which no module here imports",
	"otel_scope_name":                            "a label the OTel Prometheus exporter adds, not a Go name",
	"otel_scope_schema_url":                      "a label the OTel Prometheus exporter adds, not a Go name",
	"otel_scope_version":                         "a label the OTel Prometheus exporter adds, not a Go name",
	"target_info":                                "a metric the OTel Prometheus exporter adds, not a Go name",
	"deltaChunks":                                "the name the RealFIFO's storage had then; the sentence says it is internal/chunkq now",
	"ringGrowing":                                "the name the listener's buffer had then (upstream's buffer.RingGrowing); the sentence says so",
	"gcBgMarkWorker":                             "a Go runtime function, as a CPU profile names it",
	"StartReconcileSpan":                         "KEP-5915's draft's function, which the contract compares itself with; no released code has it",
}

// allowedPaths are repository paths the docs name on purpose although they
// do not exist, each with the reason; stale entries fail as above.
var allowedPaths = map[string]string{
	"workshop/.progress.json": "written by the workshop runner on a participant's machine, never committed",
}

var (
	universeOnce sync.Once
	universe     *Universe
	universeErr  error
)

func loadUniverse(t *testing.T) *Universe {
	t.Helper()
	universeOnce.Do(func() { universe, universeErr = LoadUniverse(root) })
	if universeErr != nil {
		t.Fatal(universeErr)
	}
	return universe
}

// problems checks the docs under dir (as Markdown lists them: each one
// exists) against u: every backticked Go name must resolve and every
// repository path must exist, unless allowed. It returns what it found
// wrong, one line each, and the allow-list entries that were used.
func problems(t *testing.T, u *Universe, dir string, docs []string, names, paths map[string]string) (bad []string, usedNames, usedPaths map[string]bool) {
	t.Helper()
	top, err := TopLevel(dir)
	if err != nil {
		t.Fatal(err)
	}
	usedNames, usedPaths = map[string]bool{}, map[string]bool{}
	for _, doc := range docs {
		spans, err := Spans(dir, doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range spans {
			if s.Kind == InlineCode {
				if name, ok := GoName(s.Text); ok && !u.IsLiteral(s.Text) && !u.IsLiteral(name) {
					if err := u.Resolve(name); err != nil {
						if _, ok := names[name]; ok {
							usedNames[name] = true
						} else {
							bad = append(bad, fmt.Sprintf("%s:%d: `%s`: %v", s.Doc, s.Line, s.Text, err))
						}
					}
				}
			}
			for _, p := range RepoPaths(dir, s, top) {
				if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
					continue
				}
				if _, ok := paths[p]; ok {
					usedPaths[p] = true
					continue
				}
				bad = append(bad, fmt.Sprintf("%s:%d: %s does not exist (in %q)", s.Doc, s.Line, p, s.Text))
			}
		}
	}
	for _, doc := range docs {
		claims, err := FileDecls(dir, doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range claims {
			if c.Unchecked {
				bad = append(bad, fmt.Sprintf("%s:%d: `%s` · `%s`: name the file's folder (a bare file name needs a full path before it on the line)", c.Doc, c.Line, c.File, c.Name))
				continue
			}
			ok, err := Declares(filepath.Join(dir, c.File), c.Name)
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s:%d: %s: %v", c.Doc, c.Line, c.File, err))
			} else if !ok {
				bad = append(bad, fmt.Sprintf("%s:%d: %s declares no %s", c.Doc, c.Line, c.File, c.Name))
			}
		}
	}
	return bad, usedNames, usedPaths
}

// TestDocsNameOnlyWhatExists fails when a doc names, in backticks, a Go
// identifier that exists neither in this repository nor in client-go
// v0.37.2 (nor, qualified by its package, in a module the repository
// uses), or a repository path that does not exist.
func TestDocsNameOnlyWhatExists(t *testing.T) {
	u := loadUniverse(t)
	docs, err := Markdown(root)
	if err != nil {
		t.Fatal(err)
	}
	bad, usedNames, usedPaths := problems(t, u, root, docs, allowedNames, allowedPaths)
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
	for n, why := range allowedNames {
		if !usedNames[n] {
			t.Errorf("allowedNames[%q] (%s): no doc names it any more, or it now exists; drop the entry", n, why)
		}
	}
	for p, why := range allowedPaths {
		if !usedPaths[p] {
			t.Errorf("allowedPaths[%q] (%s): no doc names it any more, or it now exists; drop the entry", p, why)
		}
	}
}

// TestNameCheckFindsWhatDoesNotExist: a synthetic doc naming a missing
// function, a missing method of a real type, a missing declaration of a
// real package and a missing file fails the check, and the same doc with
// real names passes. This is what keeps TestDocsNameOnlyWhatExists able to
// fail.
func TestNameCheckFindsWhatDoesNotExist(t *testing.T) {
	u := loadUniverse(t)
	dir := t.TempDir()
	for _, d := range []string{"docs", "chapters/04-deltafifo", "cmd/trace-demo", "demo"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for file, src := range map[string]string{
		"chapters/04-deltafifo/consumer.go": "package deltafifo\n\nfunc (c *Consumer) processOne() {}\n",
		"chapters/04-deltafifo/tracing.go":  "package deltafifo\n\nfunc startRoot() {}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write := func(body string) {
		if err := os.WriteFile(filepath.Join(dir, "docs", "a.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	good := "| `Indexer.*` | `chapters/04-deltafifo/consumer.go` · `processOne`; `tracing.go` · `startRoot` |\n" +
		"The spans start in `startIndexer` (`chapters/04-deltafifo/consumer.go`), " +
		"`DeltaFIFO.Pop` pops, `cache.NewSharedIndexInformer` is client-go's, `trace.WithTimestamp` is OTel's,\n" +
		"upstream's `processDeltas`, `*v1.Pod`, a `LIST`, `informer.name`, `DeltaFIFO.queued` (a span), `Indexer.Add`,\n" +
		"the pod `demo/web-1` (a key in the demo's namespace, beside a demo/ folder).\n" +
		"```\ngo test ./chapters/04-deltafifo\n```\n[the chapter](../chapters/04-deltafifo)\n"
	write(good)
	if bad, _, _ := problems(t, u, dir, []string{"docs/a.md"}, nil, nil); len(bad) > 0 {
		t.Fatalf("real names reported:\n%s", strings.Join(bad, "\n"))
	}
	write("| `Indexer.*`, `distribute` | `chapters/04-deltafifo/consumer.go` · `pop`; `tracing.go` · `notify` |\n" +
		"`handleDelta` in chapter 5; `DeltaFIFO.PopEverything`; `cache.NoSuchThing`; `uiCollected`;\n" +
		"`chapters/05-processor/nothing.go`, `demo/web/gone.go`\n```\nhack/bench.sh 12 ./cmd/no-such-demo\n```\n[gone](../internal/gone)\n")
	bad, _, _ := problems(t, u, dir, []string{"docs/a.md"}, nil, nil)
	want := []string{"`handleDelta`", "`DeltaFIFO.PopEverything`", "`cache.NoSuchThing`", "`uiCollected`",
		"chapters/05-processor/nothing.go does not exist", "cmd/no-such-demo does not exist", "internal/gone does not exist", "demo/web/gone.go does not exist",
		"chapters/04-deltafifo/consumer.go declares no pop", "chapters/04-deltafifo/tracing.go declares no notify"}
	got := strings.Join(bad, "\n")
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("not reported: %s\nreported:\n%s", w, got)
		}
	}
	if len(bad) != len(want) {
		t.Errorf("reported %d problems, want %d:\n%s", len(bad), len(want), got)
	}
	// An allowed name is not reported, and counts as used.
	bad, used, _ := problems(t, u, dir, []string{"docs/a.md"}, map[string]string{"uiCollected": "test"}, nil)
	if strings.Contains(strings.Join(bad, "\n"), "uiCollected") || !used["uiCollected"] {
		t.Errorf("allow-list not honoured: %v, used %v", bad, used)
	}
}

func TestGoName(t *testing.T) {
	for span, want := range map[string]string{
		"Foo": "Foo", "pkg.Foo": "pkg.Foo", "Type.Method()": "Type.Method", "*v1.Pod": "v1.Pod",
		"OnAdd(obj, true)": "OnAdd", "whileProcessing_locked": "whileProcessing_locked", "handleDelta": "handleDelta",
		"TypedIndexer[T]": "TypedIndexer",
		"notify":          "", "informer.name": "", "LIST": "", "OTEL_EXPORTER_OTLP_ENDPOINT": "", "go run ./cmd/x": "",
		"ListAndWatch <source>": "", "a@1": "",
	} {
		got, ok := GoName(span)
		if got != want || ok != (want != "") {
			t.Errorf("GoName(%q) = %q, %v; want %q", span, got, ok, want)
		}
	}
}
