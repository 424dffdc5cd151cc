package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// The runner's result cache. go test caches a passing result, never a
// failing one, so every unsolved stub was linked (about 3 s a checker on
// two idle cores, 5 s under -race) and run again by every `list`: half a
// minute with the course unsolved, four minutes on a loaded machine. The
// runner keeps the result of every checker it ran (resultsFile, git-ignored),
// keyed by a hash of everything that result can depend on (resultKey), and
// list and the default command take a result from there when the key is
// the same: a second list on an unchanged course runs no go command.
//
// What the key covers: the exercise's directory, its files' contents
// (without the participant's scratch tests, which the checker is built
// without: hideScratchTests); every other file of the checkout outside
// workshop/exercises and workshop/solutions (the chapters, the kit, the
// module files, cmd/trace-demo the live view's checkers run) by path, size
// and modification time, which is cheap to read and changes with any edit
// or checkout; the Go version the runner was built with; the go command's
// and the runner's environment (GO*, CGO_*, WORKSHOP_*); and the timeout
// and race mode the checker runs with. What it does not cover (a changed
// module cache under the same go.sum, a change of the Go toolchain the go
// command picks without GOTOOLCHAIN) would need `verify`, which always asks
// go test.
//
// Never kept: a result of a checker of concurrent code that passed (a racy
// answer that passed once must not keep its ✓: it runs each time, as
// before), and a result that a time limit decided (go test's timeout, or
// the kit's "did not return within"), which a loaded machine can cause.

// resultsFile is the cache, under the course's root.
const resultsFile = "workshop/.results.json"

// cachedResult is one checker's result and the key it was run under.
type cachedResult struct {
	Key    string
	Result *Result
}

// resultsMu keeps two cachedCheckers of one process (the tests) from
// writing the file at once; two runners at once each write a whole file
// (a rename), and the last one's results stay.
var resultsMu sync.Mutex

// goTestRuns counts the go test commands the runner started (goTestOnce):
// the runner's tests read it to prove a cache hit ran nothing.
var goTestRuns struct {
	sync.Mutex
	n int
}

// cachedCheckers is runCheckers for list and the default command: a
// result whose key has not changed comes from resultsFile, the others are
// run (all in one runCheckers) and kept.
func cachedCheckers(root string, exs []*Exercise) (map[string]*Result, error) {
	base, err := courseKey(root)
	if err != nil {
		return runCheckers(root, exs) // the cache is an optimisation only
	}
	resultsMu.Lock()
	defer resultsMu.Unlock()
	cache := readResults(root)
	out := map[string]*Result{}
	keys := map[string]string{}
	var todo []*Exercise
	for _, e := range exs {
		k, err := resultKey(root, base, e)
		if err != nil {
			todo = append(todo, e)
			continue
		}
		keys[e.Name()] = k
		if c, ok := cache[e.Name()]; ok && c.Key == k && c.Result != nil {
			out[e.ImportPath()] = c.Result
			continue
		}
		todo = append(todo, e)
	}
	if len(todo) == 0 {
		return out, nil
	}
	res, err := runCheckers(root, todo)
	if err != nil {
		return nil, err
	}
	for _, e := range todo {
		r := res[e.ImportPath()]
		out[e.ImportPath()] = r
		k, ok := keys[e.Name()]
		switch {
		case !ok || r == nil || !cacheable(e, r):
			delete(cache, e.Name())
		default:
			cache[e.Name()] = cachedResult{Key: k, Result: r}
		}
	}
	writeResults(root, cache)
	return out, nil
}

// timeLimited matches the messages of a result that a time limit decided.
var timeLimited = regexp.MustCompile(`did not (return|stop|finish) within|timed out`)

// cacheable reports whether r may be served again while nothing changes.
func cacheable(e *Exercise, r *Result) bool {
	if r.TimedOut || r.Pass && e.Concurrent {
		return false
	}
	for _, l := range append(slices.Clone(r.Messages), r.Output...) {
		if timeLimited.MatchString(l) {
			return false
		}
	}
	return true
}

func readResults(root string) map[string]cachedResult {
	cache := map[string]cachedResult{}
	b, err := os.ReadFile(filepath.Join(root, resultsFile))
	if err == nil && json.Unmarshal(b, &cache) != nil {
		cache = map[string]cachedResult{} // damaged: start again
	}
	return cache
}

// writeResults replaces resultsFile whole (a rename), so that a runner
// reading it never sees half of it. A cache that cannot be written is
// not an error: the next run asks go test again.
func writeResults(root string, cache map[string]cachedResult) {
	b, err := json.Marshal(cache)
	if err != nil {
		return
	}
	path := filepath.Join(root, resultsFile)
	f, err := os.CreateTemp(filepath.Dir(path), ".results-*.tmp")
	if err != nil {
		return
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
}

// courseKey hashes what every checker's result depends on besides its own
// exercise: every file of the checkout but workshop/exercises,
// workshop/solutions and dot files (.git, the runner's own state), by
// path, size and modification time; the Go version; the environment of
// the go command and the runner; the flags the runner adds in a copy.
func courseKey(root string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s %s/%s %q\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, copyFlags)
	env := os.Environ()
	slices.Sort(env)
	for _, kv := range env {
		if strings.HasPrefix(kv, "GO") || strings.HasPrefix(kv, "CGO_") || strings.HasPrefix(kv, "WORKSHOP_") || strings.HasPrefix(kv, "PATH=") {
			fmt.Fprintln(h, kv)
		}
	}
	skip := map[string]bool{
		filepath.Join("workshop", "exercises"): true,
		filepath.Join("workshop", "solutions"): true,
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel != "." && (strings.HasPrefix(d.Name(), ".") || skip[rel] || d.Name() == "node_modules") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d %d %v\n", filepath.ToSlash(rel), info.Size(), info.ModTime().UnixNano(), info.Mode())
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// resultKey is courseKey with what is e's own: the contents of the files
// of its directory the checker is built from, its timeout and race mode.
func resultKey(root, base string, e *Exercise) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s %s %v\n", base, e.Name(), timeoutFor(e), concurrent(root, e))
	dir := filepath.Join(root, e.Path())
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	for _, de := range entries {
		if err := hashEntry(h, dir, de.Name()); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashEntry adds the file or directory name of dir to h, by content;
// scratch tests are left out, as the checker's build leaves them out.
func hashEntry(h hash.Hash, dir, name string) error {
	if strings.HasSuffix(name, "_test.go") && name != "check_test.go" && name != answersFile {
		return nil
	}
	return filepath.WalkDir(filepath.Join(dir, name), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s %d\n", filepath.ToSlash(rel), len(b))
		h.Write(b)
		return nil
	})
}
