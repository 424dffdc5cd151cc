package main

// The files the runner writes: reset's exercise files and backups, and
// hint's workshop/.progress.json. Ours (client-go has no runner). The rules:
// it writes only inside the checkout (a symbolic link on the way is refused,
// never followed), it never replaces what it could not keep first, every
// write is to a temporary file renamed over the old one (a reader never sees
// half a file), and reset and hint hold workshop/.lock while they read and
// write, so that two runners at once (two terminals, watch and hint) lose
// nothing.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// lockPath is the file reset and hint lock (git-ignored).
func lockPath(root string) string { return filepath.Join(root, "workshop", ".lock") }

// lockWait is how long a runner waits for another one's reset or hint (a
// few seconds at most) before it says so.
var lockWait = 30 * time.Second

// lockCourse takes workshop/.lock, waiting for another runner that holds
// it, and returns its release.
func lockCourse(root string) (func(), error) {
	if err := noSymlinks(root, filepath.Join("workshop", ".lock")); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(lockWait)
	for {
		unlock, ok, err := tryLock(lockPath(root))
		if err != nil {
			return nil, fmt.Errorf("cannot lock workshop/.lock (nothing was changed): %w", err)
		}
		if ok {
			return unlock, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("another workshop runner has held workshop/.lock for %s (a reset or hint in another terminal?): nothing was changed; try again when it is done", lockWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// noSymlinks refuses rel (relative to root) when any part of it that exists
// is a symbolic link: writing through one could write outside the checkout,
// and the runner only ever writes inside it.
func noSymlinks(root, rel string) error {
	p := root
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cannot look at %s (nothing was changed): %w", relPath(root, p), err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link: the workshop runner writes only inside the checkout and does not follow links (nothing was changed); put a real file or directory there, or remove the link, and run it again", relPath(root, p))
		}
	}
	return nil
}

// writeAtomic replaces path with data: a temporary file next to it, synced,
// then renamed over it, so that a reader (another runner, a checker) sees
// the old file or the new one, never a truncated one. A symbolic link at
// path is replaced, not written through.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// writeNew writes data to path, which must not exist yet, and syncs it: a
// backup that is reported kept is on disk in full.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
	}
	return err
}

// progress is workshop/.progress.json: hints shown so far, per exercise.
// Other top-level keys are kept as found.
type progress struct {
	Hints map[string]int
	other map[string]json.RawMessage
}

func progressPath(root string) string { return filepath.Join(root, "workshop", ".progress.json") }

// errDamaged marks a .progress.json that is not what the runner writes.
var errDamaged = errors.New("damaged")

// readProgress reads workshop/.progress.json (none is no hints shown). A
// file that does not parse, or holds a count that is not a whole number of
// zero or more, is errDamaged: its counts are not used.
func readProgress(root string) (progress, error) {
	p := progress{Hints: map[string]int{}}
	b, err := os.ReadFile(progressPath(root))
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return p, fmt.Errorf("cannot read workshop/.progress.json: %w", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil || top == nil {
		if err == nil {
			err = errors.New("not a JSON object")
		}
		return p, fmt.Errorf("%w: %v", errDamaged, err)
	}
	if raw, ok := top["hints"]; ok {
		var hints map[string]int
		if err := json.Unmarshal(raw, &hints); err != nil {
			return p, fmt.Errorf("%w: its \"hints\" are not counts by exercise (%v)", errDamaged, err)
		}
		for name, n := range hints {
			if n < 0 {
				return p, fmt.Errorf("%w: %d hints shown for %s (a count cannot be negative)", errDamaged, n, name)
			}
			p.Hints[name] = n
		}
		delete(top, "hints")
	}
	p.other = top
	return p, nil
}

// loadProgress is the counts for printing (report): a damaged file counts
// nothing, and note says so.
func loadProgress(root string) (p progress, note string) {
	p, err := readProgress(root)
	if err != nil {
		p = progress{Hints: map[string]int{}}
		note = fmt.Sprintf("workshop/.progress.json: %v; the next hint keeps it aside and counts again from zero", err)
	}
	return p, note
}

// keepAside renames a damaged workshop/.progress.json to a new name next
// to it and returns that name.
func keepAside(root string) (string, error) {
	base := progressPath(root) + ".damaged-" + time.Now().Format("20060102-150405")
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			return name, os.Rename(progressPath(root), name)
		}
	}
}

func (p progress) marshal() []byte {
	top := map[string]any{"hints": p.Hints}
	for k, v := range p.other {
		top[k] = v
	}
	b, _ := json.MarshalIndent(top, "", "  ")
	return append(b, '\n')
}

func hint(root string, e *Exercise, out io.Writer) error {
	if e == nil {
		fmt.Fprintln(out, "Everything is solved: no hint needed.")
		return nil
	}
	if len(e.Hints) == 0 {
		return fmt.Errorf("%s has no hints: its hints.md is missing (go run ./cmd/workshop reset %s restores it)", e.Name(), e.Name())
	}
	if err := noSymlinks(root, filepath.Join("workshop", ".progress.json")); err != nil {
		return err
	}
	unlock, err := lockCourse(root)
	if err != nil {
		return err
	}
	defer unlock()
	p, err := readProgress(root)
	if errors.Is(err, errDamaged) {
		kept, kerr := keepAside(root)
		if kerr != nil {
			return fmt.Errorf("workshop/.progress.json: %v, and it cannot be kept aside (%v): move it away and ask again", err, kerr)
		}
		fmt.Fprintf(out, "workshop/.progress.json: %v; it is kept as %s, and hints are counted again from zero.\n\n", err, relPath(root, kept))
		p, err = progress{Hints: map[string]int{}}, nil
	}
	if err != nil {
		return fmt.Errorf("%w: nothing was changed; fix its permissions, or move it away", err)
	}
	n := p.Hints[e.Name()]
	if n >= len(e.Hints) {
		fmt.Fprintf(out, "%s: all %d hints shown already; the last one again:\n\n%s\n\n(the solution: go run ./cmd/workshop solution %s)\n", e.Name(), len(e.Hints), e.Hints[len(e.Hints)-1], e.Name())
		return nil
	}
	p.Hints[e.Name()] = n + 1
	if err := writeAtomic(progressPath(root), p.marshal()); err != nil {
		return fmt.Errorf("cannot count the hint in workshop/.progress.json: %w", err)
	}
	fmt.Fprintf(out, "%s — hint %d of %d:\n\n%s\n", e.Name(), n+1, len(e.Hints), e.Hints[n])
	return nil
}

// readMine reads a participant's file for reset (a variable for the test
// of a file that cannot be read: the tests run as root, who reads anything).
var readMine = os.ReadFile

// resetStep is what reset does to one shipped file.
type resetStep struct {
	rel     string // the shipped file, slash-separated, from the root
	shipped []byte
	mine    []byte // the participant's differing version, to keep
	hasMine bool
}

// reset brings e's directory back as shipped: every file the shipped
// revision has there (the edited files, and check_test.go and hints.md
// should they have been deleted or changed). It first looks at everything
// it would replace, and refuses (replacing nothing) a symbolic link on the
// way, a file it cannot read, or one that is not a regular file; then keeps
// whatever differs from the shipped version under workshop/.backup, and
// prints the path (a directory where a file belongs, or a file where a
// directory belongs, is moved there whole); only then writes the shipped
// files. A reset must never lose an answer.
func reset(root string, e *Exercise, out io.Writer) error {
	unlock, err := lockCourse(root)
	if err != nil {
		return err
	}
	defer unlock()
	rev := shippedRevision(root)
	from := rev
	files, err := gitFiles(root, rev, e.Path())
	if err == nil && len(files) == 0 && rev != "HEAD" {
		// An exercise added in this checkout and not yet on the tracked
		// branch (a course author's) is restored from HEAD.
		from = "HEAD"
		files, err = gitFiles(root, from, e.Path())
	}
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("no files under %s", e.Path())
	}
	if err != nil {
		return fmt.Errorf("cannot read %s from git %s (reset needs a git checkout): %v", e.Path(), rev, err)
	}
	exDir := filepath.ToSlash(e.Path())
	var steps []resetStep
	aside := map[string]bool{} // things in the way, slash-separated from the root
	for _, rel := range files {
		shipped, err := gitShow(root, from, rel)
		if err != nil {
			return fmt.Errorf("cannot read %s from git %s: %v", rel, from, err)
		}
		st := resetStep{rel: rel, shipped: shipped}
		same, err := inspect(root, exDir, &st, aside)
		if err != nil {
			return err
		}
		if !same {
			steps = append(steps, st)
		}
	}
	if len(steps) == 0 {
		fmt.Fprintf(out, "%s is as shipped already: nothing to reset.\n", exDir)
		return nil
	}
	if err := keep(root, e, exDir, steps, aside, out); err != nil {
		return err
	}
	for _, st := range steps {
		path := filepath.Join(root, filepath.FromSlash(st.rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("cannot reset %s: %w", st.rel, err)
		}
		if err := writeAtomic(path, st.shipped); err != nil {
			return fmt.Errorf("cannot reset %s: %w", st.rel, err)
		}
	}
	fmt.Fprintf(out, "%s is back as shipped (from git %s).\n", exDir, from)
	return nil
}

// inspect looks at what is on disk where st.rel belongs, and reports
// whether it is the shipped file already. A differing regular file is read
// into st.mine; a directory or file in the way (at or below exDir) is added
// to aside. Anything else is an error that stops the reset before it writes.
func inspect(root, exDir string, st *resetStep, aside map[string]bool) (same bool, err error) {
	if err := noSymlinks(root, st.rel); err != nil {
		return false, err
	}
	parts := strings.Split(st.rel, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		path := filepath.Join(root, filepath.FromSlash(sub))
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("cannot look at %s (nothing was reset): %w", sub, err)
		}
		last := i == len(parts)-1
		switch {
		case !last && fi.IsDir():
			continue
		case aside[sub]:
			return false, nil
		case !last || fi.IsDir():
			// A file where a directory belongs, or a directory where the
			// file belongs: it is moved aside whole, if it is the
			// exercise's own.
			if sub != exDir && !strings.HasPrefix(sub, exDir+"/") {
				return false, fmt.Errorf("%s is not a directory: reset cannot put %s back (nothing was reset); move it away and reset again", sub, exDir)
			}
			aside[sub] = true
			return false, nil
		case !fi.Mode().IsRegular():
			return false, fmt.Errorf("%s is not a regular file (%s): reset does not replace it (nothing was reset); move it away and reset again", sub, fi.Mode().Type())
		}
		mine, err := readMine(path)
		if err != nil {
			return false, fmt.Errorf("cannot read your %s to keep it (%v): nothing was reset; make it readable (chmod u+rw %s) or move it away, and reset again", sub, err, sub)
		}
		if bytes.Equal(mine, st.shipped) {
			return true, nil
		}
		st.mine, st.hasMine = mine, true
	}
	return false, nil
}

// keep puts under a new backup directory every differing file of steps
// (copied) and every thing in aside (moved), printing where each is.
func keep(root string, e *Exercise, exDir string, steps []resetStep, aside map[string]bool, out io.Writer) error {
	n := len(aside)
	for _, st := range steps {
		if st.hasMine {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	backup, err := backupDir(root, e)
	if err != nil {
		return err
	}
	under := func(rel string) (string, error) {
		r := strings.TrimPrefix(strings.TrimPrefix(rel, exDir), "/")
		if r == "" {
			r = filepath.Base(exDir)
		}
		p := filepath.Join(backup, filepath.FromSlash(r))
		return p, os.MkdirAll(filepath.Dir(p), 0o755)
	}
	for _, st := range steps {
		if !st.hasMine {
			continue
		}
		kept, err := under(st.rel)
		if err == nil {
			err = writeNew(kept, st.mine)
		}
		if err != nil {
			return fmt.Errorf("cannot keep your %s (nothing was reset): %w", st.rel, err)
		}
		fmt.Fprintf(out, "your %s is kept in %s\n", strings.TrimPrefix(st.rel, exDir+"/"), relPath(root, kept))
	}
	var moved []string
	for rel := range aside {
		moved = append(moved, rel)
	}
	sort.Strings(moved)
	for _, rel := range moved {
		kept, err := under(rel)
		if err == nil {
			err = os.Rename(filepath.Join(root, filepath.FromSlash(rel)), kept)
		}
		if err != nil {
			return fmt.Errorf("cannot move your %s aside (nothing was reset): %w", rel, err)
		}
		what := "file"
		if fi, err := os.Lstat(kept); err == nil && fi.IsDir() {
			what = "directory"
		}
		fmt.Fprintf(out, "your %s %s is moved to %s\n", what, rel, relPath(root, kept))
	}
	return nil
}

// backupDir makes a new directory for the files reset replaces:
// workshop/.backup/<chapter>/<exercise>/<time>, git-ignored.
func backupDir(root string, e *Exercise) (string, error) {
	rel := filepath.Join("workshop", ".backup", e.Chapter, e.Dir)
	if err := noSymlinks(root, rel); err != nil {
		return "", err
	}
	base := filepath.Join(root, rel, time.Now().Format("20060102-150405"))
	dir := base
	for i := 2; ; i++ {
		err := os.MkdirAll(filepath.Dir(dir), 0o755)
		if err == nil {
			err = os.Mkdir(dir, 0o755)
		}
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("cannot make a backup directory (nothing was reset): %w", err)
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}
