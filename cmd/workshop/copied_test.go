package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The temporary copy (copied) holds every folder of this module that the
// course's packages and the demo its checkers run import, directly or not:
// a folder added or moved (demo/ and liveprobe/ left internal/) must join
// copied, or selfcheck cannot build a single exercise.
func TestCopiedHoldsWhatTheCourseImports(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-tags", "workshop", "-f", "{{.ImportPath}}", "../../workshop/...", "../../cmd/trace-demo")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(p, modulePath+"/")
		if !ok {
			continue
		}
		top, _, _ := strings.Cut(rel, "/")
		if !seen[top] && !slices.Contains(copied, top) {
			t.Errorf("the course imports %s, but copied has no %s", p, top)
		}
		seen[top] = true
	}
	if len(seen) < 5 {
		t.Fatalf("only %v found: did go list see the course?", seen)
	}
}
