package layers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/informer-anatomy/informer-anatomy/"

type pkg struct {
	ImportPath                         string
	Imports, TestImports, XTestImports []string
}

var chapterRe = regexp.MustCompile(`^chapters/0(\d)-`)

// layer places a package of this module: 0 below the chapters, 10+N for
// chapter N, 19 for the live view's helpers that read the chapters (above
// them, below dropin and the demo's parts, which both use them), 20 above
// the chapters, 30 for programs, examples, the workshop and the tests.
func layer(rel string) int {
	switch {
	case rel == "liveprobe":
		return 19
	case strings.HasPrefix(rel, "demo/"), rel == "dropin":
		return 20
	case strings.HasPrefix(rel, "internal/"):
		return 0
	case strings.HasPrefix(rel, "chapters/"):
		m := chapterRe.FindStringSubmatch(rel)
		n, _ := strconv.Atoi(m[1])
		return 10 + n
	}
	return 30
}

func name(l int) string {
	switch {
	case l == 0:
		return "below the chapters"
	case l == 19:
		return "the live view's helpers (above the chapters, below dropin)"
	case l < 20:
		return fmt.Sprintf("chapter %d", l-10)
	case l == 20:
		return "above the chapters"
	}
	return "a program, example, the workshop or a test"
}

// TestImportsPointDown: every import of a package of this module (its
// tests' imports included) goes to a lower layer, or, within a layer,
// only where the layer allows it (helpers among helpers, above among
// above); a chapter imports no later chapter and nothing above.
func TestImportsPointDown(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	cmd := exec.Command("go", "list", "-tags", "e2e browser workshop", "-json", "./...")
	cmd.Dir = root
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, errb.String())
	}
	var checked int
	for dec := json.NewDecoder(&out); dec.More(); {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		from := strings.TrimPrefix(p.ImportPath, module)
		if from == p.ImportPath {
			continue
		}
		fl := layer(from)
		imports := append(append(append([]string{}, p.Imports...), p.TestImports...), p.XTestImports...)
		for _, imp := range imports {
			to, ok := strings.CutPrefix(imp, module)
			if !ok || to == from {
				continue
			}
			checked++
			tl := layer(to)
			switch {
			case tl < fl:
			case tl == fl && (fl == 0 || fl == 20 || fl == 30):
			default:
				t.Errorf("%s (%s) imports %s (%s): imports must point down (test/layers/doc.go)", from, name(fl), to, name(tl))
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d imports checked: did go list see the module?", checked)
	}
}
