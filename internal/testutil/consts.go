package testutil

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// StringConsts reads the Go package in dir (its non-test files) and
// returns the value of each exported constant written as a string literal,
// or as a conversion of one (attribute.Key("informer.name")), by the
// constant's name. Tests that hold a page or a script to a package's names
// read them this way, so that a name added to the package is checked
// without a list to keep. It fails t if dir holds no Go file or one does
// not parse.
//
// Ours: a test helper.
func StringConsts(t testing.TB, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	consts := map[string]string{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatalf("parsing %s: %v", path, err)
		}
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !n.IsExported() || i >= len(vs.Values) {
						continue
					}
					if v, ok := stringLiteral(vs.Values[i]); ok {
						consts[n.Name] = v
					}
				}
			}
		}
	}
	return consts
}

// stringLiteral is e's value when e is a string literal or a one-argument
// call (a conversion) of one.
func stringLiteral(e ast.Expr) (string, bool) {
	if c, ok := e.(*ast.CallExpr); ok && len(c.Args) == 1 {
		e = c.Args[0]
	}
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(lit.Value)
	return v, err == nil
}
