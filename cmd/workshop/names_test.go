package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Every name an answer needs is on its exercise's page: a participant
// with the right idea never fails for a name they could not know.
func TestEveryNameAnAnswerNeedsIsOnItsPage(t *testing.T) {
	exs, err := load("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range exs {
		missing, err := NamesOffPage("../..", e)
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
		}
		for _, m := range missing {
			t.Errorf("%s: its answer needs %s, which its page does not give", e.Name(), m)
		}
	}
}

// The check finds a key whose namespace the page leaves out, and a
// listener it does not name; it takes a key the page writes whole, or by
// its parts, and leaves paths alone.
func TestNamesOffPageFindsWhatThePageLacks(t *testing.T) {
	root := t.TempDir()
	e := &Exercise{Chapter: "01-x", Dir: "1-y", Kind: "predict", Files: []string{"exercise.go"}}
	page := "// Package y is an exercise.\n//\n// The cache holds x@5 and pod p-0 in namespace default; the handler is *demo.auditHandler#0.\npackage y\n\n"
	write := func(vars string) {
		t.Helper()
		writeFile(t, root, e.SolutionPath(), "exercise.go", page+vars)
	}
	write("var A = \"default/x: Deleted@tombstone(5)\"\nvar B = []string{\"add default/p-0\", \"add kube-system/p-0\", \"add default/new\"}\nvar C = \"*demo.slowHandler#2\"\nvar D = \"*demo.auditHandler#0\"\nvar E = \"github.com/informer-anatomy/informer-anatomy/chapters/01-store\"\n")
	got, err := NamesOffPage(root, e)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"the namespace kube-system (of kube-system/p-0)", "the name new (of default/new)", "the listener *demo.slowHandler#2"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	e.Kind = "build"
	if got, err := NamesOffPage(root, e); err != nil || got != nil {
		t.Errorf("a build exercise: %q, %v", got, err)
	}
}

// writeFile writes src to root/dir/name, making dir.
func writeFile(t *testing.T, root, dir, name, src string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, dir, name), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}
