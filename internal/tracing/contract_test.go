package tracing

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestContractPageNamesEveryConstant: every span name, event name and
// attribute key defined here appears, in backticks, on docs/span-contract.md,
// so the page cannot fall behind the code that emits the names.
func TestContractPageNamesEveryConstant(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "span-contract.md"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "tracing.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var checked int
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range vs.Names {
			if i >= len(vs.Values) || !(strings.HasPrefix(name.Name, "Span") || strings.HasPrefix(name.Name, "Key") || strings.HasPrefix(name.Name, "Event")) {
				continue
			}
			var lit *ast.BasicLit
			switch v := vs.Values[i].(type) {
			case *ast.BasicLit:
				lit = v
			case *ast.CallExpr: // attribute.Key("...")
				if len(v.Args) == 1 {
					lit, _ = v.Args[0].(*ast.BasicLit)
				}
			}
			if lit == nil || lit.Kind != token.STRING {
				continue
			}
			value, _ := strconv.Unquote(lit.Value)
			value = strings.TrimSpace(value) // SpanRootPrefix is "ListAndWatch "
			checked++
			if !strings.Contains(string(page), "`"+value) {
				t.Errorf("%s = %q is not on docs/span-contract.md", name.Name, value)
			}
		}
		return true
	})
	if checked < 30 {
		t.Fatalf("found only %d names in tracing.go: has the file's layout changed?", checked)
	}
}
