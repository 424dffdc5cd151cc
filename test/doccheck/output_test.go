package doccheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestShapeTakesOutWhatDiffersBetweenRuns(t *testing.T) {
	same := [][2]string{
		{"· relist: the reflector sent WATCH from 624 · 2 objects · bookmark rv 626",
			"· relist: the reflector sent WATCH from 24 · 1 object · bookmark rv 26"},
		{"   ListAndWatch watch  MODIFIED rv=4   +0.000ms    0.035ms  |▏                               |",
			"   ListAndWatch watch  MODIFIED rv=604   +0.000ms   12.035ms  |      ████                      |"},
		{"   span                                   start       took  |0                               | 3.584ms",
			"   span      start   took  |0         | 20.117ms"},
		{"   root links to the cycle span Reflector.ListAndWatch c73314eb445767b2 (trace 968ef9cb4e8d79e2778c3c21a0f0dba3)",
			"   root links to the cycle span Reflector.ListAndWatch 1a551cb7b7bfb47d (trace fc6a4cbab56f8d625c280632346b3f19)"},
		{"*demo.lateHandler#3 got 1 resync call so far", "*demo.lateHandler#3 got 2 resync calls so far"},
		{"queued -0.003ms", "queued +0.028ms"},
	}
	for _, c := range same {
		if a, b := Shape(c[0]), Shape(c[1]); a != b {
			t.Errorf("two runs' lines of one shape differ:\n%q\n%q", a, b)
		}
	}
	differ := [][2]string{
		{"the handlers that asked for none got none", "the handlers that asked for none got 1 during the lesson"},
		{"· synced: the lister sees 1 pod", "· synced: the lister sees 1 node"},
		{"├─ RealFIFO.queued  Updated", "├─ DeltaFIFO.queued  Updated"},
	}
	for _, c := range differ {
		if Shape(c[0]) == Shape(c[1]) {
			t.Errorf("lines that differ in words have one shape: %q", Shape(c[0]))
		}
	}
}

func TestOutputsAndDrift(t *testing.T) {
	dir := t.TempDir()
	doc := "# A page\n\nA run:\n\n<!-- output: go run ./cmd/x -->\n```\nstart at 12:00\n\n3 pods done\n```\n\n" +
		"- in a list:\n\n  <!-- output-lines: go run ./cmd/x --verbose -->\n  ```\n  first 1\n  last 2\n  ```\n"
	if err := os.WriteFile(filepath.Join(dir, "page.md"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	outs, err := Outputs(dir, "page.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 2 {
		t.Fatalf("want 2 samples, got %+v", outs)
	}
	whole, lines := outs[0], outs[1]
	if !whole.Whole || whole.Command != "go run ./cmd/x" || whole.Line != 5 || whole.Text != "start at 12:00\n\n3 pods done" {
		t.Errorf("whole sample read as %+v", whole)
	}
	if lines.Whole || lines.Command != "go run ./cmd/x --verbose" || lines.Text != "first 1\nlast 2" {
		t.Errorf("sample in a list read as %+v", lines)
	}
	for run, drifted := range map[string]bool{
		"start at 09:41\n\n1 pod done\n":         false,
		"start at 09:41\n1 pod done\n":           true, // a blank line lost
		"start at 09:41\n\n1 pod done\nmore\n":   true,
		"start at 09:41\n\n1 pod failed\n":       true,
		"start at 09:41\n\n":                     true,
		"started at 09:41\n\n1 pod done\nmore\n": true,
	} {
		if d := whole.Drift(run, Shape); (d != "") != drifted {
			t.Errorf("whole sample against %q: drift %q", run, d)
		}
	}
	for run, drifted := range map[string]bool{
		"first 7\nother\nlast 8\n": false,
		"first 7\nlast 8":          false,
		"last 8\nfirst 7\n":        true, // out of order
		"first 7\n":                true,
	} {
		if d := lines.Drift(run, Shape); (d != "") != drifted {
			t.Errorf("lines sample against %q: drift %q", run, d)
		}
	}
	if _, err := Outputs(dir, "missing.md"); err == nil {
		t.Error("a missing doc is an error")
	}
	bad := "<!-- output: go run ./cmd/x -->\nno block\n"
	if err := os.WriteFile(filepath.Join(dir, "bad.md"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Outputs(dir, "bad.md"); err == nil || !strings.Contains(err.Error(), "bad.md:1") {
		t.Errorf("a marker without a block: %v", err)
	}
}
