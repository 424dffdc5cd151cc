package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// miniCourse is a git repository with one exercise of many hints, enough
// for reset and hint (which run no checker), and that exercise.
func miniCourse(t *testing.T) (string, *Exercise) {
	t.Helper()
	root := t.TempDir()
	e := &Exercise{Chapter: "01-x", Dir: "1-a", Files: []string{"exercise.go"}}
	var hints strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&hints, "## Hint %d\n\nhint number %d\n\n", i, i)
	}
	files := map[string]string{
		filepath.Join(e.Path(), "exercise.go"):   "package a\n\n// shipped\n",
		filepath.Join(e.Path(), "hints.md"):      hints.String(),
		filepath.Join(e.Path(), "check_test.go"): "//go:build workshop\n\npackage a\n",
		filepath.Join("workshop", ".gitignore"):  "/.progress.json*\n/.backup/\n/.lock\n",
	}
	for p, s := range files {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, root, "init", "-q")
	git(t, root, "add", ".")
	git(t, root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "shipped")
	e.Hints = parseHints(hints.String())
	return root, e
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestResetNeverWritesThroughASymlink(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "notes.go")
	for _, c := range []struct {
		name string
		link func(root string, e *Exercise) error
	}{
		{"the exercise file", func(root string, e *Exercise) error {
			p := filepath.Join(root, e.Path(), "exercise.go")
			_ = os.Remove(p)
			return os.Symlink(secret, p)
		}},
		{"the exercise folder", func(root string, e *Exercise) error {
			if err := os.WriteFile(filepath.Join(outside, "exercise.go"), []byte("mine, elsewhere\n"), 0o644); err != nil {
				return err
			}
			p := filepath.Join(root, e.Path())
			_ = os.RemoveAll(p)
			return os.Symlink(outside, p)
		}},
		{"the backup folder", func(root string, e *Exercise) error {
			if err := os.WriteFile(filepath.Join(root, e.Path(), "exercise.go"), []byte("package a\n// mine\n"), 0o644); err != nil {
				return err
			}
			return os.Symlink(outside, filepath.Join(root, "workshop", ".backup"))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(secret, []byte("not the runner's\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			root, e := miniCourse(t)
			if err := c.link(root, e); err != nil {
				t.Fatal(err)
			}
			before := listTree(t, outside)
			var out bytes.Buffer
			err := reset(root, e, &out)
			if err == nil || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("reset through a link to outside the checkout: err %v, want a refusal naming the link:\n%s", err, out.String())
			}
			if after := listTree(t, outside); after != before {
				t.Errorf("reset wrote outside the checkout:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// listTree is every file under dir with its content.
func listTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		c, err := os.ReadFile(p)
		fmt.Fprintf(&b, "%s=%q(%v) ", p, c, err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestResetNeverReplacesWhatItCouldNotRead(t *testing.T) {
	root, e := miniCourse(t)
	file := filepath.Join(root, e.Path(), "exercise.go")
	mine := "package a\n\n// my answer, which a read error hides\n"
	if err := os.WriteFile(file, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	// The tests run as root, where chmod does not stop a read: the read
	// fails by hand instead.
	readMine = func(p string) ([]byte, error) {
		if p == file {
			return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrPermission}
		}
		return os.ReadFile(p)
	}
	t.Cleanup(func() { readMine = os.ReadFile })
	var out bytes.Buffer
	err := reset(root, e, &out)
	if err == nil || !strings.Contains(err.Error(), "nothing was reset") {
		t.Errorf("reset of a file it cannot read: err %v, want a refusal:\n%s", err, out.String())
	}
	if got := readString(t, file); got != mine {
		t.Errorf("reset replaced a file it could not keep: now %q", got)
	}
}

func TestResetMovesADirectoryInTheWayAside(t *testing.T) {
	root, e := miniCourse(t)
	file := filepath.Join(root, e.Path(), "exercise.go")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(file, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(file, "inside", "work.go"), []byte("my work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := damage(root, e, "", "a"); !slices.ContainsFunc(d, func(s string) bool { return strings.Contains(s, "exercise.go is a directory") }) {
		t.Errorf("damage must say exercise.go is a directory: %q", d)
	}
	var out bytes.Buffer
	if err := reset(root, e, &out); err != nil {
		t.Fatalf("reset of a directory where exercise.go belongs: %v\n%s", err, out.String())
	}
	if got := readString(t, file); got != "package a\n\n// shipped\n" {
		t.Errorf("exercise.go after reset: %q", got)
	}
	m := regexp.MustCompile(`moved to (\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("reset must say where the directory went:\n%s", out.String())
	}
	if got := readString(t, filepath.Join(root, filepath.FromSlash(m[1]), "inside", "work.go")); got != "my work\n" {
		t.Errorf("the directory's content was not kept: %q", got)
	}
}

func TestTwoResetsAtOnceKeepTheWorkOnce(t *testing.T) {
	root, e := miniCourse(t)
	file := filepath.Join(root, e.Path(), "exercise.go")
	for round := range 8 {
		mine := fmt.Sprintf("package a\n\n// my answer, round %d\n%s", round, strings.Repeat("// more of it\n", 2000))
		if err := os.WriteFile(file, []byte(mine), 0o644); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		outs := make([]bytes.Buffer, 2)
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() { errs[i] = reset(root, e, &outs[i]) })
		}
		wg.Wait()
		kept := 0
		for i := range 2 {
			if errs[i] != nil {
				t.Fatalf("round %d: reset: %v\n%s", round, errs[i], outs[i].String())
			}
			for _, m := range regexp.MustCompile(`kept in (\S+)`).FindAllStringSubmatch(outs[i].String(), -1) {
				kept++
				if got := readString(t, filepath.Join(root, filepath.FromSlash(m[1]))); got != mine {
					t.Errorf("round %d: %s is said to keep the work but holds %d bytes of %d", round, m[1], len(got), len(mine))
				}
			}
		}
		if kept != 1 {
			t.Errorf("round %d: two resets at once kept the work %d times, want once (the second finds it as shipped):\n%s\n%s", round, kept, outs[0].String(), outs[1].String())
		}
		if got := readString(t, file); got != "package a\n\n// shipped\n" {
			t.Errorf("round %d: after two resets: %q", round, got)
		}
	}
}

func TestHintSurvivesAnyProgressFile(t *testing.T) {
	for _, bad := range []string{
		`{"hints": {"01-x/1-a": -3}}`,
		`{"hints": {"01-x/1-a": 2, "01-y/2`,
		`{"hints": {"01-x/1-a": 1.5}}`,
		`{"hints": ["01-x/1-a"]}`,
		`[]`,
		`null`,
		"",
	} {
		t.Run(bad, func(t *testing.T) {
			root, e := miniCourse(t)
			if err := os.WriteFile(progressPath(root), []byte(bad), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, note := loadProgress(root); !strings.Contains(note, "keeps it aside") {
				t.Errorf("report must say the progress file is damaged, got note %q", note)
			}
			var out bytes.Buffer
			if err := hint(root, e, &out); err != nil {
				t.Fatalf("hint: %v\n%s", err, out.String())
			}
			m := regexp.MustCompile(`kept as (\S+),`).FindStringSubmatch(out.String())
			if m == nil {
				t.Fatalf("hint must say where the damaged file is kept:\n%s", out.String())
			}
			if got := readString(t, filepath.Join(root, filepath.FromSlash(m[1]))); got != bad {
				t.Errorf("the damaged file was not kept as it was: %q", got)
			}
			if !strings.Contains(out.String(), "hint 1 of 40") {
				t.Errorf("counting starts again at the first hint:\n%s", out.String())
			}
			if p, err := readProgress(root); err != nil || p.Hints[e.Name()] != 1 {
				t.Errorf("the new count: %v, %v", p.Hints, err)
			}
		})
	}
}

func TestHintKeepsWhatItDoesNotKnow(t *testing.T) {
	root, e := miniCourse(t)
	if err := os.WriteFile(progressPath(root), []byte(`{"hints": {"01-x/1-a": 2, "09-z/1-q": 7}, "theme": "dark"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := hint(root, e, &out); err != nil || !strings.Contains(out.String(), "hint 3 of 40") {
		t.Fatalf("hint: %v\n%s", err, out.String())
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(readString(t, progressPath(root))), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"hints": map[string]any{"01-x/1-a": 3.0, "09-z/1-q": 7.0}, "theme": "dark"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("progress after a hint: %v, want %v", got, want)
	}
}

func TestHintRefusesASymlinkedProgressFile(t *testing.T) {
	root, e := miniCourse(t)
	outside := filepath.Join(t.TempDir(), "elsewhere.json")
	if err := os.WriteFile(outside, []byte(`{"hints": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, progressPath(root)); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := hint(root, e, &out); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("hint through a symlinked .progress.json: err %v:\n%s", err, out.String())
	}
	if got := readString(t, outside); got != `{"hints": {}}` {
		t.Errorf("hint wrote outside the checkout: %q", got)
	}
}

func TestTwoRunnersAtOnceLoseNoHint(t *testing.T) {
	root, e := miniCourse(t)
	const n = 16
	var wg sync.WaitGroup
	outs := make([]bytes.Buffer, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { errs[i] = hint(root, e, &outs[i]) })
	}
	wg.Wait()
	var shown []int
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("hint: %v", errs[i])
		}
		var k int
		if _, err := fmt.Sscanf(strings.TrimPrefix(outs[i].String(), e.Name()+" — hint "), "%d of", &k); err != nil {
			t.Fatalf("hint output %q: %v", outs[i].String(), err)
		}
		shown = append(shown, k)
	}
	slices.Sort(shown)
	for i, k := range shown {
		if k != i+1 {
			t.Fatalf("%d runners at once showed hints %v, want 1 to %d each once", n, shown, n)
		}
	}
	p, err := readProgress(root)
	if err != nil || p.Hints[e.Name()] != n {
		t.Errorf("count after %d hints at once: %v, %v", n, p.Hints, err)
	}
}
