package doccheck

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite quoted code blocks in the docs from the source")

const root = "../.."

// TestDocsQuoteCompilingCode fails when a doc's quoted code differs from the
// declaration it names.
func TestDocsQuoteCompilingCode(t *testing.T) {
	docs, err := Markdown(root)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, doc := range docs {
		quotes, err := Check(root, doc)
		if err != nil {
			t.Fatal(err)
		}
		total += len(quotes)
		if *update {
			if err := Rewrite(root, doc, quotes); err != nil {
				t.Fatal(err)
			}
			continue
		}
		for _, q := range quotes {
			if q.Got != q.Want {
				t.Errorf("%s:%d quotes %s %s, but the source now reads:\n%s\n(run go test ./test/doccheck -update)",
					q.Doc, q.Line, q.File, q.Decl, q.Want)
			}
		}
	}
	if total == 0 {
		t.Fatal("no doc quotes any code: the markers are gone or the docs are missing")
	}
}

func TestExtract(t *testing.T) {
	dir := t.TempDir()
	src := `package p

// T is a type.
type T struct{ x int }

// M is a method.
func (t *T) M() int { return t.x }

func (g G[K]) N() {}

func (h H[K, V]) M() {}

const (
	A = 1
	B = 2
)
`
	file := filepath.Join(dir, "p.go")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for decl, want := range map[string]string{
		"T":   "// T is a type.\ntype T struct{ x int }",
		"T.M": "// M is a method.\nfunc (t *T) M() int { return t.x }",
		"G.N": "func (g G[K]) N() {}",
		"H.M": "func (h H[K, V]) M() {}",
		"B":   "B = 2",
	} {
		got, err := Extract(file, decl)
		if err != nil || got != want {
			t.Errorf("Extract(%s) = %q, %v; want %q", decl, got, err, want)
		}
	}
	if _, err := Extract(file, "Missing"); err == nil || !strings.Contains(err.Error(), `no declaration "Missing"`) {
		t.Errorf("missing declaration: err = %v", err)
	}
}

func TestCheckFindsDrift(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package p\n\nfunc F() int { return 1 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	md := "text\n<!-- code: a.go F -->\n```go\nfunc F() int { return 2 }\n```\n"
	if err := os.WriteFile(filepath.Join(dir, "d.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	q, err := Check(dir, "d.md")
	if err != nil || len(q) != 1 {
		t.Fatalf("Check: %v, %d quotes", err, len(q))
	}
	if q[0].Got == q[0].Want {
		t.Fatal("drift not detected")
	}
	if err := Rewrite(dir, "d.md", q); err != nil {
		t.Fatal(err)
	}
	q, _ = Check(dir, "d.md")
	if q[0].Got != q[0].Want {
		t.Fatalf("Rewrite did not fix the block: %q", q[0].Got)
	}
}
