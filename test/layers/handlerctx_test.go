package layers

import (
	"bytes"
	"encoding/json"
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
