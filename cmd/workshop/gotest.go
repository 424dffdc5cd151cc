package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Result is what one exercise's checker said.
type Result struct {
	Pass        bool
	BuildFailed bool     // the package or its checker did not compile
	TimedOut    bool     // go test stopped the checker (Timeout)
	Output      []string // cut to what the participant needs
	// Messages are the checker's own messages (each t.Error or t.Fatal,
	// its continuation lines included), in order.
	Messages []string
}

// testEvent is one line of `go test -json` (cmd/test2json).
type testEvent struct {
	Action      string
	Package     string
	ImportPath  string
	Test        string
	Output      string
	FailedBuild string
}

// checkTags is the build tag that switches the checkers on.
const checkTags = "workshop"

// copyFlags are added to the go commands the runner starts while it works
// in a copy of the course: the selfcheck's temporary copy, and the
// courses cmd/workshop's tests make. They hold -trimpath there, because
// without it the go command's build cache keys each package by its
// directory, and every copy compiled the chapters, the kit and the
// checkers anew (for a concurrent checker under -race): minutes. A
// participant's runs, in their own checkout, get none: a -trimpath build
// shares no cache entry with a plain one, so their `go run
// ./cmd/trace-demo` and the by-hand go test line would then compile
// client-go a second time. What a participant reads is the same either
// way: compile errors name the file as they see it, and a test's failure
// lines carry the file's base name.
var copyFlags []string

// inACopy makes the go commands started from now on share their build
// cache with other copies of the course (copyFlags). The selfcheck and
// the runner's tests call it before any go command starts; nothing else
// may. Once: the selfcheck run by a test calls it again.
var inACopy = sync.OnceFunc(func() { copyFlags, keepBinaries = []string{"-trimpath"}, true })

// keepBinaries, set with copyFlags, makes goTest keep each checker's test
// binary in the course (binariesDir, go test -o DIR/): the go command then
// links a checker again only when what it is built from has changed, and
// otherwise runs the binary it kept. Linking is the one step of go test
// its build cache does not keep (about 3 s a checker here, 5 s under
// -race), and a failing checker's result is never cached: without it the
// runner's tests, which run the same few unsolved stubs over and over,
// spent most of their minutes linking the same binaries again. Only in a
// copy of the course: each binary is about 35 MB, and 46 of them in a
// participant's checkout is too much to leave behind unasked.
var keepBinaries bool

// binariesDir is where goTest keeps checker binaries in a course: its own
// workshop/.checkers, or sharedBinaries when it is set.
func binariesDir(root string) string {
	if sharedBinaries != "" {
		return sharedBinaries
	}
	return filepath.Join(root, "workshop", ".checkers")
}

// sharedBinaries, set by the runner's tests (TestMain), keeps the checker
// binaries of all their temporary courses in one place: with -trimpath an
// exercise built from the same files is the same binary whichever copy it
// is in, so a stub one test linked is not linked again by the next test's
// copy. The tests that use it run one after another: two go commands must
// not write one binary at once.
var sharedBinaries string

// Timeouts of a checker's test binary. The checkers give up on an answer
// that does not return long before (kit.Returns, kit.WaitFor), each with
// its own message; this is the backstop for what they cannot guard, such
// as a package initialiser that never ends, and the runner turns it into a
// message too instead of go test's goroutine dump. The live view's
// checkers build and run cmd/trace-demo, and a cluster's are slower: they
// get longer.
var (
	checkerTimeout     = 30 * time.Second
	slowCheckerTimeout = 2 * time.Minute
)

// timeoutEnv, a Go duration (e.g. 1m), replaces checkerTimeout: for a
// room of slow laptops, where a checker may need longer than 30 s. The
// checker's binary inherits it, and the kit scales its own limits to it
// (kit.TimeoutEnv: kit.CallTimeout and kit.InitTimeout).
const timeoutEnv = "WORKSHOP_TIMEOUT"

func timeoutFor(e *Exercise) time.Duration {
	quick := checkerTimeout
	if d, err := time.ParseDuration(os.Getenv(timeoutEnv)); err == nil && d > 0 {
		quick = d
	}
	if e.Needs == "browser" || e.Needs == "cluster" {
		return max(quick, slowCheckerTimeout)
	}
	return quick
}

// runCheckers runs the checkers of exs and returns each one's result by
// import path: one `go test` per timeout (one build, many test binaries,
// run in parallel by the go command). extra are more go test flags (e.g.
// -count=1), env more environment variables.
func runCheckers(root string, exs []*Exercise, extra ...string) (map[string]*Result, error) {
	return runCheckersEnv(root, exs, nil, extra...)
}

func runCheckersEnv(root string, exs []*Exercise, env []string, extra ...string) (map[string]*Result, error) {
	results := map[string]*Result{}
	// One go test per timeout and race mode (a checker of concurrent code
	// runs under -race and uncached), over all of its exercises at once:
	// the go command builds, links and runs their packages side by side,
	// and loads the module's packages once. The verdict is the checker's
	// alone, so only checker tests run: -run names every checker test of
	// the group, and in a package that runs exactly its own, because the
	// participant's scratch tests are hidden from the build
	// (hideScratchTests) and the other test files of a package are its
	// checker's. (One go test per exercise, as this once was, made a list
	// of 46 exercises 46 go commands one after another.)
	type group struct {
		timeout time.Duration
		race    bool
	}
	var order []group
	groups := map[group][]*Exercise{}
	tests := map[group][]string{}
	for _, e := range exs {
		if missing := e.missing(root); missing != "" {
			// Nothing to run: go test would fail on the whole command.
			results[e.ImportPath()] = &Result{BuildFailed: true, Output: []string{missing + ": go run ./cmd/workshop reset " + e.Name() + " brings it back"}}
			continue
		}
		names, err := checkerTests(root, e)
		if err != nil {
			results[e.ImportPath()] = &Result{BuildFailed: true, Output: []string{err.Error() + ": go run ./cmd/workshop reset " + e.Name() + " brings it back"}}
			continue
		}
		if fileExists(filepath.Join(root, e.Path(), answersFile)) {
			names = append(names, answersTest) // the selfcheck's
		}
		g := group{timeoutFor(e), concurrent(root, e)}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], e)
		tests[g] = append(tests[g], names...)
	}
	for _, g := range order {
		names := slices.Compact(slices.Sorted(slices.Values(tests[g])))
		flags := append([]string{"-run", runPattern(names)}, extra...)
		if g.race {
			flags = append(flags, raceFlags...)
		}
		res, err := goTest(root, groups[g], g.timeout, env, flags)
		if err != nil {
			return nil, err
		}
		for k, v := range res {
			results[k] = v
		}
	}
	return results, nil
}

// concurrentMark, a line of its own in check_test.go, marks a checker of
// concurrent code: it runs under the race detector, and never from go
// test's cache (a racy answer that passed once must not keep its ✓).
const concurrentMark = "//workshop:concurrent"

// raceFlags are added for a checker of concurrent code (a later -count
// wins over an earlier one).
var raceFlags = []string{"-race", "-count=1"}

// concurrent reports whether e's checker carries concurrentMark.
func concurrent(root string, e *Exercise) bool {
	b, err := os.ReadFile(filepath.Join(root, e.Path(), "check_test.go"))
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == concurrentMark {
			return true
		}
	}
	return false
}

// hideScratchTests writes a go build overlay (go help build, -overlay)
// that hides every _test.go file of exs' folders but the checker's
// (check_test.go, and the selfcheck's answers file): a participant's own
// tests are theirs to run, and must not decide the verdict. -run alone
// keeps a failing scratch test out, but not one that does not compile,
// or that declares a name the checker declares too (TestPredictions): the
// package would not build, and a solved exercise would read "does not
// compile". It returns "" when there is nothing to hide.
func hideScratchTests(root string, exs []*Exercise) (string, error) {
	replace := map[string]string{}
	for _, e := range exs {
		dir, err := filepath.Abs(filepath.Join(root, e.Path()))
		if err != nil {
			return "", err
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // missing() has said what is wrong with the folder
		}
		for _, de := range entries {
			n := de.Name()
			if strings.HasSuffix(n, "_test.go") && n != "check_test.go" && n != answersFile {
				replace[filepath.Join(dir, n)] = "" // "": as if it did not exist
			}
		}
	}
	if len(replace) == 0 {
		return "", nil
	}
	f, err := os.CreateTemp("", "workshop-overlay-*.json")
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := json.NewEncoder(f).Encode(struct{ Replace map[string]string }{replace}); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// goTest runs `go test -json` over exs, the participant's scratch tests
// hidden (hideScratchTests): one go command, or, when it keeps the
// binaries (keepBinaries), one per batch of exercises whose directory
// names differ (go test -o DIR/ names each binary after its directory:
// 04-deltafifo/1-pops and 04-realfifo/1-pops would both be 1-pops.test).
func goTest(root string, exs []*Exercise, timeout time.Duration, env, extra []string) (map[string]*Result, error) {
	if !keepBinaries {
		return goTestOnce(root, exs, timeout, env, extra)
	}
	results := map[string]*Result{}
	for i, batch := range uniqueDirBatches(exs) {
		dir := filepath.Join(binariesDir(root), strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		res, err := goTestOnce(root, batch, timeout, env, append(slices.Clip(extra), "-o", dir+string(filepath.Separator)))
		if err != nil {
			return nil, err
		}
		maps.Copy(results, res)
	}
	return results, nil
}

// uniqueDirBatches splits exs, in order, into batches in which no two
// exercises share a directory name: the first batch takes every exercise
// it can, so an exercise lands in the same batch (and its binary in the
// same place) whenever it is run with the same others before it.
func uniqueDirBatches(exs []*Exercise) [][]*Exercise {
	var batches [][]*Exercise
	var names []map[string]bool
	for _, e := range exs {
		placed := false
		for i := range batches {
			if !names[i][e.Dir] {
				batches[i], names[i][e.Dir], placed = append(batches[i], e), true, true
				break
			}
		}
		if !placed {
			batches = append(batches, []*Exercise{e})
			names = append(names, map[string]bool{e.Dir: true})
		}
	}
	return batches
}

// goTestOnce is one `go test -json` over exs.
func goTestOnce(root string, exs []*Exercise, timeout time.Duration, env, extra []string) (map[string]*Result, error) {
	args := append(append([]string{"test"}, copyFlags...), "-tags", checkTags, "-json", "-timeout", timeout.String())
	args = append(args, extra...)
	overlay, err := hideScratchTests(root, exs)
	if err != nil {
		return nil, err
	}
	if overlay != "" {
		defer os.Remove(overlay)
		args = append(args, "-overlay", overlay)
	}
	for _, e := range exs {
		args = append(args, "./"+strings.ReplaceAll(e.Path(), "\\", "/"))
	}
	goTestRuns.Lock()
	goTestRuns.n++
	goTestRuns.Unlock()
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &limitedWriter{w: &stderr, n: 1 << 20}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot run go: %w", err)
	}
	results := map[string]*Result{}
	outputs := map[string]*collector{}
	build := map[string]*collector{}
	get := func(m map[string]*collector, k string) *collector {
		c := m[k]
		if c == nil {
			c = &collector{}
			m[k] = c
		}
		return c
	}
	rd := bufio.NewReaderSize(stdout, 64<<10)
	for {
		line, err := readLine(rd, 4<<20)
		if len(line) > 0 {
			var ev testEvent
			if json.Unmarshal(line, &ev) == nil {
				handleEvent(ev, results, func(k string) *collector { return get(outputs, k) }, func(k string) *collector { return get(build, k) })
			}
		}
		if err != nil {
			break
		}
	}
	_, _ = io.Copy(io.Discard, stdout)
	waitErr := cmd.Wait()
	for _, e := range exs {
		if _, ok := results[e.ImportPath()]; !ok {
			// go test could not even start on it (e.g. a syntax error
			// in go.mod): report what it said rather than a silent ✗.
			results[e.ImportPath()] = &Result{BuildFailed: true, Output: cutBuild(strings.Split(strings.TrimSpace(stderr.String()), "\n"))}
		}
	}
	if len(results) == 0 && waitErr != nil {
		return nil, fmt.Errorf("go test: %v\n%s", waitErr, stderr.String())
	}
	return results, nil
}

// handleEvent files one test2json event: output into the package's
// collector, a package's end into results.
func handleEvent(ev testEvent, results map[string]*Result, output, build func(string) *collector) {
	switch ev.Action {
	case "build-output":
		build(strings.SplitN(ev.ImportPath, " ", 2)[0]).add(ev.Output)
	case "output":
		output(ev.Package).add(ev.Output)
	case "pass", "fail", "skip":
		if ev.Test != "" {
			return
		}
		r := &Result{Pass: ev.Action == "pass", BuildFailed: ev.FailedBuild != ""}
		if r.BuildFailed {
			// FailedBuild names the package that did not compile:
			// the exercise, or a chapter it imports.
			failed := strings.SplitN(ev.FailedBuild, " ", 2)[0]
			r.Output = cutBuild(build(failed).raw())
			if len(r.Output) == 0 {
				r.Output = cutBuild(build(ev.Package).raw())
			}
			if failed != ev.Package {
				r.Output = append([]string{"(in " + failed + ", which the exercise imports)"}, r.Output...)
			}
		} else if !r.Pass {
			c := output(ev.Package)
			r.Output, r.Messages, r.TimedOut = c.result()
		}
		results[ev.Package] = r
	}
}

// readLine reads one line, keeping at most max bytes of it: test2json
// splits long output into short events, but nothing else must be able to
// make the runner hold an unbounded line.
func readLine(rd *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := rd.ReadSlice('\n')
		if len(line)+len(chunk) <= max {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		_, _ = l.w.Write(p[:k])
	}
	return len(p), nil
}

// What a failed checker's output is cut to: every message of the checker
// (up to maxMessageLines lines), a panic's first lines, and the first
// lines of anything else (what the answer printed); the rest is counted,
// never kept, so that an answer printing megabytes neither hides the
// checker's message nor fills the runner's memory.
const (
	maxOtherLines   = 6
	maxPanicLines   = 14
	maxMessageLines = 60
	maxLineLen      = 300  // a line of what the answer printed
	maxMessageLen   = 4000 // a line of a checker's message (keepMessage)
)

var (
	testLine    = regexp.MustCompile(`^\s+[\w.-]+\.go:\d+: ?(.*)$`)
	runningTest = regexp.MustCompile(`^\s+(Test\S*) \(`)
	timedOut    = regexp.MustCompile(`^panic: test timed out after (\S+)`)
)

// collector turns one package's output, line by line, into what the
// participant sees.
type collector struct {
	partial  string   // an output line not ended yet
	lines    []string // kept, in order
	all      []string // build output: every line (the compiler's are few)
	messages []string
	inMsg    bool // the last kept line was part of a checker's message
	msgLines int
	inPanic  bool // after a "panic:" line: its trace follows
	panicked int  // lines kept of the current panic
	other    int  // other lines kept
	cut      int  // lines not kept
	cutAt    int  // index in lines of the "… cut" note (when cut > 0)
	timeout  string
	stopped  bool // after a timeout's header: only the goroutine dump follows
	running  []string
}

// add takes one test2json output chunk: usually one line with its "\n",
// a piece of a longer line otherwise.
func (c *collector) add(s string) {
	s = c.partial + s
	c.partial = ""
	for s != "" {
		line, rest, ok := strings.Cut(s, "\n")
		if !ok {
			if len(line) > 64<<10 {
				c.line(line) // a line without end: take it as it is
				line = ""
			}
			c.partial = line
			return
		}
		c.line(line)
		s = rest
	}
}

func (c *collector) raw() []string {
	if c.partial != "" {
		c.all = append(c.all, c.partial)
		c.partial = ""
	}
	return c.all
}

func (c *collector) line(l string) {
	if len(c.all) < 1000 {
		c.all = append(c.all, l)
	}
	if c.stopped {
		if m := runningTest.FindStringSubmatch(l); m != nil {
			c.running = append(c.running, m[1])
		}
		return
	}
	t := strings.TrimSpace(l)
	switch {
	case t == "PASS", t == "FAIL", strings.HasPrefix(t, "=== "), strings.HasPrefix(t, "--- "),
		strings.HasPrefix(t, "ok "), strings.HasPrefix(t, "FAIL\t"), strings.HasPrefix(t, "exit status"):
		c.inMsg = false
		return
	}
	if m := timedOut.FindStringSubmatch(t); m != nil {
		c.timeout, c.stopped = m[1], true
		return
	}
	if t == "SIGQUIT: quit" || strings.HasPrefix(t, "*** Test killed") {
		// go test killed the binary a minute after its timeout.
		c.timeout, c.stopped = "its time", true
		return
	}
	m := testLine.FindStringSubmatch(l)
	if m == nil && strings.HasPrefix(l, "kit: ") {
		m = []string{l, l} // the kit's own words, printed outside any test
	}
	if m != nil {
		c.messages = append(c.messages, m[1])
		c.keepMessage(m[1])
		c.inMsg, c.inPanic = true, false
		return
	}
	if c.inMsg && strings.HasPrefix(l, "        ") {
		cont := strings.TrimPrefix(strings.TrimPrefix(l, "        "), "    ")
		c.messages[len(c.messages)-1] += "\n" + cont
		c.keepMessage(cont)
		return
	}
	c.inMsg = false
	if len(l) > maxLineLen {
		// Not the checker's words: what the answer printed, or a
		// panic's. Cut at a word's end.
		l = cutAtWord(l, maxLineLen)
	}
	if strings.HasPrefix(t, "panic: ") || strings.HasPrefix(t, "fatal error: ") {
		c.inPanic, c.panicked = true, 0
	}
	if c.inPanic && c.panicked < maxPanicLines {
		c.panicked++
		c.lines = append(c.lines, l)
		return
	}
	if t == "" {
		return
	}
	if !c.inPanic && c.other < maxOtherLines {
		c.other++
		c.lines = append(c.lines, l)
		return
	}
	c.notShown()
}

// keepMessage keeps a line of a checker's message whole: a message is
// one finding, and a cut in the middle of it can leave a sentence that
// points at the wrong thing (07-controller/1's named the wrong field once
// its last clause was cut). Only a line longer than maxMessageLen, which a
// checker writes only when it quotes something huge the answer made, is
// cut, and then after a whole sentence.
func (c *collector) keepMessage(l string) {
	c.msgLines++
	if c.msgLines <= maxMessageLines {
		c.lines = append(c.lines, cutAtSentence(l, maxMessageLen))
		return
	}
	c.notShown()
}

// cutAtSentence is s when it is at most max bytes long; otherwise its
// longest beginning of at most max bytes that ends a sentence or a clause
// (".", "?", "!", ";" or ":" before a space), and a note of what is left
// out. A line with no such end in its first max bytes is kept whole: a
// cut there would be mid-sentence, and a checker's line is bounded by what
// test2json passes on.
func cutAtSentence(s string, max int) string {
	if len(s) <= max {
		return s
	}
	end := -1
	for i := 0; i+1 < max && i+1 < len(s); i++ {
		if strings.IndexByte(".?!;:", s[i]) >= 0 && s[i+1] == ' ' {
			end = i + 1
		}
	}
	if end <= 0 {
		return s
	}
	return s[:end] + fmt.Sprintf(" … (the rest of this message, %d characters, is not shown: run the go test line below to see all)", len(s)-end)
}

// cutAtWord is s cut to about max bytes at the end of a word, with a note
// of how much is left out.
func cutAtWord(s string, max int) string {
	end := max
	if i := strings.LastIndexByte(s[:max], ' '); i > max/2 {
		end = i
	}
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + fmt.Sprintf(" … (%d more characters)", len(s)-end)
}

// notShown counts a line that is not kept; the first such line leaves the
// place for the "… N more lines not shown" note that result writes.
func (c *collector) notShown() {
	if c.cut == 0 {
		c.cutAt = len(c.lines)
		c.lines = append(c.lines, "")
	}
	c.cut++
}

// result is the cut output, the checker's messages, and whether go test
// stopped it.
func (c *collector) result() (out, messages []string, timedOut bool) {
	if c.partial != "" {
		p := c.partial
		c.partial = ""
		c.line(p)
	}
	out = append([]string(nil), c.lines...)
	if c.cut > 0 {
		out[c.cutAt] = fmt.Sprintf("… (%d more lines not shown: run the go test line below to see all)", c.cut)
	}
	if c.timeout != "" {
		running := "the checker"
		if len(c.running) > 0 {
			running = strings.Join(c.running, ", ")
		}
		msg := fmt.Sprintf("the checker did not finish within %s (%s was still running): your answer may never return — an endless loop, a channel never closed, a lock never released?", c.timeout, running)
		out = append(out, msg)
		messages = append(messages, msg)
	}
	return out, append(c.messages, messages...), c.timeout != ""
}

// cutTest keeps the checker's own messages (t.Error text without the file
// and line of the checker, which the participant does not edit) and any
// panic, and drops go test's framing.
func cutTest(lines []string) []string {
	c := &collector{}
	for _, l := range lines {
		c.line(l)
	}
	out, _, _ := c.result()
	return out
}

// cutBuild keeps the compiler's messages.
func cutBuild(lines []string) []string {
	var out []string
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "FAIL") {
			out = append(out, t)
		}
	}
	return limit(out, 20)
}

func limit(lines []string, n int) []string {
	if len(lines) > n {
		return append(lines[:n:n], fmt.Sprintf("… (%d more lines; run the go test line below to see all)", len(lines)-n))
	}
	return lines
}

// goCommand is the go test line that runs one checker by hand.
func goCommand(e *Exercise) string {
	run := ""
	if len(e.Tests) > 0 {
		run = " -run '" + runPattern(e.Tests) + "'"
	}
	race := ""
	if e.Concurrent {
		race = " -race"
	}
	return fmt.Sprintf("go test -tags %s -count=1%s%s -v ./%s", checkTags, race, run, strings.ReplaceAll(e.Path(), "\\", "/"))
}

// fileExists reports whether path exists.
func fileExists(path string) bool { _, err := os.Stat(path); return err == nil }
