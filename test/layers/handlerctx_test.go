package layers

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// TestNoChapterImportsHandlerctx: the goroutine registry that lets a traced
// workqueue find the handler call an Add is made in (internal/handlerctx)
// is dropin's business, not the informer's. Chapter 5 tells a handler that
// asks which span each call is (processor.CallSpanHandler) and dropin's
// adapter registers it; a chapter that imported the registry again, tests
// included, would put the side channel (and its runtime.Stack per handler
// call) back in the informer's path.
func TestNoChapterImportsHandlerctx(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command("go", "list", "-json", "./chapters/...")
	cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, errb.String())
	}
	const registry = module + "/internal/handlerctx"
	chapters := 0
	for dec := json.NewDecoder(&out); dec.More(); {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		chapters++
		for _, imports := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
			if slices.Contains(imports, registry) {
				t.Errorf("%s imports %s", p.ImportPath, registry)
			}
		}
	}
	if chapters < 6 {
		t.Fatalf("only %d chapter packages listed", chapters)
	}
}

// TestNoRuntimeStackOnTheEventPath: no package an event or a queue
// operation passes through calls runtime.Stack (or runtime/debug.Stack)
// in the files built for amd64 and arm64. Reading the goroutine's id from
// it cost about a microsecond per handler call, Add and Get, 16% of a
// controller's CPU at a 1% sampler (issue 37); internal/handlerctx now finds
// the goroutine with a few instructions of assembly there, and only its
// fallback for other architectures may read the stack.
func TestNoRuntimeStackOnTheEventPath(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	for _, arch := range []string{"amd64", "arm64"} {
		cmd := exec.Command("go", "list", "-json", "./chapters/...", "./internal/handlerctx", "./internal/queuetrace",
			"./internal/tracing", "./internal/chunkq", "./internal/metrics", "./liveprobe", "./dropin")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOARCH="+arch)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("go list: %v\n%s", err, errb.String())
		}
		files := 0
		for dec := json.NewDecoder(&out); dec.More(); {
			var p struct {
				Dir     string
				GoFiles []string
			}
			if err := dec.Decode(&p); err != nil {
				t.Fatal(err)
			}
			for _, name := range p.GoFiles {
				files++
				path := filepath.Join(p.Dir, name)
				f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
				if err != nil {
					t.Fatal(err)
				}
				ast.Inspect(f, func(n ast.Node) bool {
					sel, ok := n.(*ast.SelectorExpr)
					if !ok || sel.Sel.Name != "Stack" {
						return true
					}
					if pkg, ok := sel.X.(*ast.Ident); ok && (pkg.Name == "runtime" || pkg.Name == "debug") {
						t.Errorf("%s (GOARCH=%s) calls %s.Stack", path, arch, pkg.Name)
					}
					return true
				})
			}
		}
		if files < 50 {
			t.Fatalf("GOARCH=%s: only %d files listed", arch, files)
		}
	}
}
