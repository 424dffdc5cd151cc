package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The trial attacks: a predict or investigate exercise must not be
// solvable by trial, without the reasoning it asks for. The selfcheck
// plays three participants who do not think (the third, the searcher, is
// described below), on the checker compiled once
// with the solution in place and every prediction set, through the
// answers test's init (answers.go, setEnv), to the values an attack
// chooses:
//
//   - the coin-tosser tries every combination of the yes/no values
//     (every prediction made only of booleans: a bool, a []bool, a struct
//     of bools), leaving the other predictions as the stub has them. Past
//     16 combinations, the solution's combination and 15 others chosen
//     with a fixed seed;
//   - the flipper changes only what the checker names: each run, every
//     prediction a checker message names whose answer can be guessed in a
//     few runs (made of yes/no values, numbers from -1 to 5 and strings the
//     task offers in quotes, with at most trialGuesses combinations: one
//     small number, two yes/no values) takes its solution's value, which is
//     what a few runs of trying would find. Four rounds, or until the
//     checker names nothing new.
//
// Either passing the checker is a problem: the exercise can be done by
// trial. What makes an exercise safe is a prediction that cannot be
// guessed (a list of requests, a resourceVersion, a handler's name among
// many, a count the checker does not name on its own), which the stub gets
// wrong. Statically, a prediction that is not only yes/no values must not
// start as its answer.

// trialMaxCombos is how many yes/no combinations the coin-tosser tries.
const trialMaxCombos = 16

// trialRounds is how many runs the flipper gets.
const trialRounds = 4

// checkerTests are the names of the test functions of e's check_test.go
// under root: what the checker runs, and nothing else in the folder.
func checkerTests(root string, e *Exercise) ([]string, error) {
	pf, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, e.Path(), "check_test.go"), nil, 0)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, d := range pf.Decls {
		if f, ok := d.(*ast.FuncDecl); ok && f.Recv == nil && strings.HasPrefix(f.Name.Name, "Test") {
			names = append(names, f.Name.Name)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s/check_test.go has no Test function", e.Path())
	}
	return names, nil
}

// runPattern is the -run pattern that runs exactly names.
func runPattern(names []string) string {
	return "^(" + strings.Join(names, "|") + ")$"
}

// leaf is one scalar of a prediction's JSON value.
type leaf struct {
	path  []any // keys (string) and indices (int) below the prediction
	value any   // bool, json.Number or string
}

func decodeJSON(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

func leavesOf(v any, path []any) []leaf {
	switch x := v.(type) {
	case map[string]any:
		var out []leaf
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out = append(out, leavesOf(x[k], append(slices.Clone(path), k))...)
		}
		return out
	case []any:
		var out []leaf
		for i, el := range x {
			out = append(out, leavesOf(el, append(slices.Clone(path), i))...)
		}
		return out
	case nil:
		return nil
	}
	return []leaf{{path: path, value: v}}
}

// setPath returns v with the leaf at path replaced by x (v is changed in
// place where it can be; a shape that does not fit is left as it is).
func setPath(v any, path []any, x any) any {
	if len(path) == 0 {
		return x
	}
	switch c := v.(type) {
	case map[string]any:
		if k, ok := path[0].(string); ok {
			if _, has := c[k]; has {
				c[k] = setPath(c[k], path[1:], x)
			}
		}
	case []any:
		if i, ok := path[0].(int); ok && i < len(c) {
			c[i] = setPath(c[i], path[1:], x)
		}
	}
	return v
}

func cloneJSON(v any) any {
	b, _ := json.Marshal(v)
	c, _ := decodeJSON(string(b))
	return c
}

// guessable reports whether a participant finds l's value in a few runs
// once told it is wrong: a yes/no value, a small number, or one of the
// strings the task offers in quotes.
func guessable(l leaf, task string) bool {
	switch x := l.value.(type) {
	case bool:
		return true
	case json.Number:
		n, err := x.Int64()
		return err == nil && n >= -1 && n <= 5
	case string:
		if x == "true" || x == "false" {
			return true
		}
		if n, err := strconv.Atoi(x); err == nil && n >= -1 && n <= 5 {
			return true
		}
		return x != "" && (strings.Contains(task, `"`+x+`"`) || strings.Contains(task, "`"+x+"`"))
	}
	return false
}

// trialGuesses is how many values of one prediction a participant
// tries, once a checker names it as wrong, before thinking instead.
const trialGuesses = 8

// guesses is how many values a participant must try to find a
// prediction made of ls by trial: the product of each leaf's options
// (a yes/no value 2, a small number 7, a string the task offers the number
// of strings it quotes), or 0 when a leaf cannot be guessed.
func guesses(ls []leaf, task string) int {
	if len(ls) == 0 {
		return 0
	}
	n := 1
	for _, l := range ls {
		if !guessable(l, task) {
			return 0
		}
		switch x := l.value.(type) {
		case bool:
			n *= 2
		case json.Number:
			n *= 7
		case string:
			if x == "true" || x == "false" {
				n *= 2
			} else if _, err := strconv.Atoi(x); err == nil {
				n *= 7
			} else {
				n *= max(2, len(quoted.FindAllString(task, -1)))
			}
		}
		if n > 1<<20 {
			return n
		}
	}
	return n
}

// quoted are the strings a task offers in quotes.
var quoted = regexp.MustCompile("\"[^\"\n]+\"|`[^`\n]+`")

func allBool(ls []leaf) bool {
	for _, l := range ls {
		if _, ok := l.value.(bool); !ok {
			return false
		}
	}
	return len(ls) > 0
}

// trialExercise is what the attacks need of one exercise.
type trialExercise struct {
	e          *Exercise
	task       string
	names      []string       // predictions, sorted
	stub, sol  map[string]any // decoded JSON values
	bin, dir   string
	tests      []string
	runTimeout time.Duration
	runs       atomic.Int32
	// sem bounds the checker runs made at once (nil: no bound).
	sem chan struct{}
	// check, when set, stands for the checker's binary (the tests'
	// checkers written in Go).
	check func(v map[string]any) (bool, []string)
}

// values is the JSON object of every prediction, as the answers test's
// init reads it.
func (t *trialExercise) values(v map[string]any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// run runs the checker with the predictions set to v: whether it passed,
// and its messages.
func (t *trialExercise) run(v map[string]any) (bool, []string, error) {
	t.runs.Add(1)
	if t.check != nil {
		pass, msgs := t.check(v)
		return pass, msgs, nil
	}
	if t.sem != nil {
		t.sem <- struct{}{}
		defer func() { <-t.sem }()
	}
	ctx, cancel := context.WithTimeout(context.Background(), t.runTimeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.bin, "-test.run", runPattern(t.tests), "-test.count=1", "-test.v", "-test.timeout", t.runTimeout.String())
	cmd.Dir = t.dir
	cmd.Env = append(os.Environ(), setEnv+"="+t.values(v))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return false, nil, fmt.Errorf("the checker did not finish in %s under a trial", t.runTimeout)
	}
	if exited := new(exec.ExitError); err != nil && !errors.As(err, &exited) {
		// Not the checker failing: it never ran (a binary missing), and
		// every attack would read as defeated.
		return false, nil, fmt.Errorf("cannot run its checker for the trials: %v", err)
	}
	c := &collector{}
	c.add(out.String())
	_, messages, _ := c.result()
	if err == nil {
		return true, messages, nil
	}
	if strings.Contains(out.String(), "panic: ") && strings.Contains(out.String(), "selfcheck: ") {
		return false, nil, fmt.Errorf("setting the predictions failed: %s", firstLine(out.String(), "panic: "))
	}
	return false, messages, nil
}

func firstLine(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// startValues are the problems of predictions that start as their
// answer: a participant who leaves one alone has it right, and the
// checker's silence about it tells them so. A yes/no prediction starts as
// the other value.
func (t *trialExercise) startValues() []string {
	var problems []string
	for _, n := range t.names {
		a, _ := json.Marshal(t.stub[n])
		b, _ := json.Marshal(t.sol[n])
		if bytes.Equal(a, b) {
			problems = append(problems, fmt.Sprintf("the stub's %s is already its answer: a starting value must never be one", n))
		}
	}
	return problems
}

// coinTosser tries the yes/no combinations.
func (t *trialExercise) coinTosser() ([]string, error) {
	var yesNo []string
	var count int
	for _, n := range t.names {
		if ls := leavesOf(t.sol[n], nil); allBool(ls) {
			yesNo = append(yesNo, n)
			count += len(ls)
		}
	}
	if count == 0 {
		return nil, nil
	}
	solBits := t.bits(yesNo)
	var combos [][]bool
	if count <= 4 { // 2^4 = trialMaxCombos
		for m := range 1 << count {
			c := make([]bool, count)
			for i := range c {
				c[i] = m&(1<<i) != 0
			}
			combos = append(combos, c)
		}
	} else {
		combos = append(combos, solBits)
		r := rand.New(rand.NewPCG(1, uint64(count)))
		for len(combos) < trialMaxCombos {
			c := make([]bool, count)
			for i := range c {
				c[i] = r.IntN(2) == 1
			}
			combos = append(combos, c)
		}
	}
	// The combinations are independent runs: made side by side (t.run
	// waits for its turn), each reporting whether it passed.
	passed := make([]bool, len(combos))
	errs := make([]error, len(combos))
	var wg sync.WaitGroup
	for k, c := range combos {
		v := cloneJSON(t.stub).(map[string]any)
		i := 0
		for _, n := range yesNo {
			val := cloneJSON(t.sol[n])
			for _, l := range leavesOf(t.sol[n], nil) {
				val = setPath(val, l.path, c[i])
				i++
			}
			v[n] = val
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			passed[k], _, errs[k] = t.run(v)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	for _, pass := range passed {
		if pass {
			return []string{fmt.Sprintf("it can be solved by trial: trying the yes/no values of %s (%d combinations), with the rest as the stub has it, passes the checker; add a part that shows understanding (a count, a resourceVersion, a request, a handler's name), which the stub gets wrong",
				strings.Join(yesNo, ", "), len(combos))}, nil
		}
	}
	return nil, nil
}

func (t *trialExercise) bits(names []string) []bool {
	var out []bool
	for _, n := range names {
		for _, l := range leavesOf(t.sol[n], nil) {
			out = append(out, l.value.(bool))
		}
	}
	return out
}

// flipper changes only what the checker names.
func (t *trialExercise) flipper(first []string) ([]string, error) {
	v := cloneJSON(t.stub).(map[string]any)
	messages := first
	var changed []string
	for round := range trialRounds {
		if round > 0 {
			pass, m, err := t.run(v)
			if err != nil {
				return nil, err
			}
			if pass {
				return []string{fmt.Sprintf("it can be solved by trial: changing only what the checker names (%s) passes it in %d runs; its messages must say what is wrong in the reasoning without naming which value to change, or the exercise needs an answer that cannot be guessed",
					strings.Join(changed, ", "), round+1)}, nil
			}
			messages = m
		}
		all := strings.Join(messages, "\n")
		moved := false
		for _, n := range t.names {
			if !containsWord(all, n) {
				continue
			}
			if tries := guesses(leavesOf(t.sol[n], nil), t.task); tries == 0 || tries > trialGuesses {
				continue
			}
			if a, b := t.values(map[string]any{n: v[n]}), t.values(map[string]any{n: t.sol[n]}); a != b {
				v[n] = cloneJSON(t.sol[n])
				moved = true
				changed = appendOnce(changed, n)
			}
		}
		if !moved {
			return nil, nil
		}
	}
	return nil, nil
}

func appendOnce(s []string, x string) []string {
	if slices.Contains(s, x) {
		return s
	}
	return append(s, x)
}

// taskOf is e's task, the stub's package doc comment (as the solution's).
func taskOf(root string, e *Exercise) string {
	doc, _, _ := packageDoc(filepath.Join(root, e.SolutionPath(), e.Files[0]))
	return doc
}

// trialParallel is how many checker runs the trials make at once. Most
// of a checker's run is waiting (an API server starting, a reflector's
// one-second rule, the live view's demo), so twice the cores keeps them
// busy; the checkers already run side by side under go test (-p).
var trialParallel = 2 * runtime.NumCPU()

// trials runs the attacks on every predict and investigate exercise of
// exs, with the solutions in place under sc.tmp; stubs are the checkers'
// results on the stubs (their messages are the flipper's first run).
// Every checker is built once (buildTrialBinaries), and the exercises'
// attacks run side by side, at most trialParallel checker runs at a
// time; the problems are reported in the exercises' order.
func (sc *selfcheckRun) trials(exs []*Exercise, stubs map[string]*Result) []string {
	bins := filepath.Join(sc.tmp, "trial-bin")
	if err := os.MkdirAll(bins, 0o755); err != nil {
		return []string{err.Error()}
	}
	var todo []*Exercise
	for _, e := range exs {
		if e.Kind == "build" {
			continue
		}
		stub := stubs[e.ImportPath()]
		if stub == nil || stub.BuildFailed || stub.Pass {
			continue // reported already
		}
		todo = append(todo, e)
	}
	built := sc.trialBins
	if built == nil {
		built = sc.buildTrialBinaries(todo, bins)
	}
	found := make([][]string, len(todo))
	sem := make(chan struct{}, max(1, trialParallel))
	var wg sync.WaitGroup
	for i, e := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, ok := built[e.ImportPath()]
			if !ok {
				found[i] = []string{"its checker was not built for the trials"}
				return
			}
			if b.err != "" {
				found[i] = []string{b.err}
				return
			}
			found[i] = sc.trialOne(e, stubs[e.ImportPath()], b.path, sem)
		}()
	}
	wg.Wait()
	var problems []string
	for i, e := range todo {
		for _, p := range found[i] {
			problems = append(problems, e.Name()+": "+p)
		}
	}
	return problems
}

// trialBinary is one exercise's checker built for the trials, or why it
// could not be.
type trialBinary struct {
	path, err string
}

// buildTrialBinaries builds the checker of every exercise of exs (with
// its solution and the answers test in place) with as few go commands as
// can be: `go test -c -o DIR/` builds many packages in one command, in
// parallel, each to DIR/<last element of its import path>.test, so the
// exercises are put in batches whose directory names differ
// (04-deltafifo/1-pops and 04-realfifo/1-pops are both 1-pops). A batch
// that fails is built again one exercise at a time, so that the error is
// the exercise's own.
func (sc *selfcheckRun) buildTrialBinaries(exs []*Exercise, bins string) map[string]trialBinary {
	out := map[string]trialBinary{}
	batches := uniqueDirBatches(exs)
	// The participant's scratch tests are hidden, as goTest hides them
	// (selfcheck --worktree judges a participant's tree).
	overlay, err := hideScratchTests(sc.tmp, exs)
	if err != nil {
		for _, e := range exs {
			out[e.ImportPath()] = trialBinary{err: err.Error()}
		}
		return out
	}
	if overlay != "" {
		defer os.Remove(overlay)
	}
	build := func(dir string, batch []*Exercise) ([]byte, error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		args := append(append([]string{"test", "-c"}, copyFlags...), "-tags", checkTags, "-vet=off", "-ldflags=-s -w", "-o", dir+string(filepath.Separator))
		if overlay != "" {
			args = append(args, "-overlay", overlay)
		}
		for _, e := range batch {
			args = append(args, "./"+filepath.ToSlash(e.Path()))
		}
		cmd := exec.Command("go", args...)
		cmd.Dir = sc.tmp
		return cmd.CombinedOutput()
	}
	for i, batch := range batches {
		dir := filepath.Join(bins, strconv.Itoa(i))
		if _, err := build(dir, batch); err == nil {
			for _, e := range batch {
				out[e.ImportPath()] = trialBinary{path: filepath.Join(dir, e.Dir+".test")}
			}
			continue
		}
		for j, e := range batch {
			one := filepath.Join(dir, "one", strconv.Itoa(j))
			if msg, err := build(one, []*Exercise{e}); err != nil {
				out[e.ImportPath()] = trialBinary{err: fmt.Sprintf("cannot build its checker for the trials: %v\n%s", err, msg)}
			} else {
				out[e.ImportPath()] = trialBinary{path: filepath.Join(one, e.Dir+".test")}
			}
		}
	}
	return out
}

// trialOne runs the attacks on e with its checker built at bin; sem
// bounds the checker runs made at once across exercises.
func (sc *selfcheckRun) trialOne(e *Exercise, stub *Result, bin string, sem chan struct{}) []string {
	stubR, err1 := readRenderings(sc.stubAnswers, e)
	solR, err2 := readRenderings(sc.solAnswers, e)
	if err1 != nil || err2 != nil {
		return nil // solutionProblems says so
	}
	t := &trialExercise{e: e, task: taskOf(sc.tmp, e), stub: map[string]any{}, sol: map[string]any{},
		dir: filepath.Join(sc.tmp, e.Path()), runTimeout: timeoutFor(e), bin: bin, sem: sem}
	for n, r := range solR {
		s, ok := stubR[n]
		if r.JSON == "" || !ok || s.JSON == "" {
			return []string{"prediction " + n + " has no JSON form: the trial attacks cannot set it"}
		}
		var err error
		if t.sol[n], err = decodeJSON(r.JSON); err == nil {
			t.stub[n], err = decodeJSON(s.JSON)
		}
		if err != nil {
			return []string{err.Error()}
		}
		t.names = append(t.names, n)
	}
	slices.Sort(t.names)
	problems := t.startValues()
	tests, err := checkerTests(sc.tmp, e)
	if err != nil {
		return append(problems, err.Error())
	}
	t.tests = tests
	// The answers test sets the stub's values: the same checker must
	// fail, or the attacks prove nothing.
	if pass, _, err := t.run(t.stub); err != nil || pass {
		return append(problems, fmt.Sprintf("the checker with the stub's values set by the trial harness does not fail as the stub does (%v): the attacks cannot run", err))
	}
	// The two attacks are independent: made side by side, reported in
	// order.
	attacks := []func() ([]string, error){t.coinTosser, func() ([]string, error) { return t.flipper(stub.Messages) }, func() ([]string, error) { return t.searcher(stub.Messages) }}
	found := make([][]string, len(attacks))
	errs := make([]error, len(attacks))
	var wg sync.WaitGroup
	for i, attack := range attacks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			found[i], errs[i] = attack()
		}()
	}
	wg.Wait()
	for i := range attacks {
		if errs[i] != nil {
			return append(problems, errs[i].Error())
		}
		problems = append(problems, found[i]...)
	}
	return problems
}

// The searcher: the third participant who does not think, and the
// strongest. It knows the shape of each prediction (a list of strings, a
// struct of two numbers) and what the page offers: every string the task
// quotes, with a template's placeholder letter ("watch rv=X") filled in
// with the page's other one-letter names ("S") or left empty; the numbers
// 0 to 9; yes and no. It reads of the checker's messages only which
// predictions they name and, for a list, where it first goes wrong
// (kit.DiffList's "your entry N is the first that is not what
// happened", or a request, call or pop named by number or ordinal), and
// searches:
//
//   - the predictions one message names together are searched together,
//     and those named by different messages side by side, one candidate
//     each per run: a prediction no message names any more is right;
//   - a list whose messages say where it first goes wrong is searched a
//     position at a time, each over every candidate entry;
//   - anything else through its candidates in order, simplest first (the
//     lowest numbers, the page's first words, the shortest lists).
//
// An exercise it solves within trialBudget runs of its checker (the one
// on the stub included) yields to trial: a script does it in a minute.
// It runs no checker for an exercise whose answer holds a value it never
// tries (a resourceVersion, a handler's name that is on no page): those
// are safe.

// trialBudget is the most runs in which solving an exercise counts as
// trial.
const trialBudget = 12

// searchMax bounds the candidates the searcher lists for one prediction,
// or for the predictions of one message together: past trialBudget they
// are never reached.
const searchMax = 64

var (
	oneLetter = regexp.MustCompile(`\b[A-Z]\b`)
	// Where a message says a list first goes wrong.
	posAt       = regexp.MustCompile(`(?i)\b(?:entry|request|call|pop|element|item|line|position)\s+(?:number\s+)?(\d+)\b`)
	posOrdinal  = regexp.MustCompile(`(?i)\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth) (?:entry|request|call|pop|element|item|line)\b`)
	posNone     = regexp.MustCompile(`(?i)wrote no entry|predicted no entr`)
	posRightTo  = regexp.MustCompile(`(\d+) entries are right as far as they go`)
	posFewerTo  = regexp.MustCompile(`the first (\d+) are right`)
	ordinalWord = []string{"first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"}
)

// searchWords are the strings the searcher tries: what the task quotes,
// in order, a template's placeholders filled in.
func searchWords(task string) []string {
	var quotedWords []string
	for _, q := range quoted.FindAllString(task, -1) {
		quotedWords = append(quotedWords, q[1:len(q)-1])
	}
	placeholders := map[string]bool{}
	for _, w := range quotedWords {
		for _, l := range oneLetter.FindAllString(w, -1) {
			placeholders[l] = true
		}
	}
	fillers := []string{""}
	for _, l := range oneLetter.FindAllString(quoted.ReplaceAllString(task, " "), -1) {
		if !placeholders[l] && l != "A" && l != "I" && !slices.Contains(fillers, l) {
			fillers = append(fillers, l)
		}
	}
	var out []string
	add := func(w string) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	for _, w := range quotedWords {
		holes := slices.Compact(slices.Sorted(slices.Values(oneLetter.FindAllString(w, -1))))
		if len(holes) == 0 {
			add(w)
			continue
		}
		// Every way of filling the holes, each with a filler.
		fills := [][]string{{}}
		for range holes {
			var next [][]string
			for _, f := range fills {
				for _, x := range fillers {
					next = append(next, append(slices.Clone(f), x))
				}
			}
			fills = next
		}
		for _, f := range fills {
			filled := w
			for i, h := range holes {
				filled = regexp.MustCompile(`\b`+h+`\b`).ReplaceAllLiteralString(filled, f[i])
			}
			add(filled)
		}
	}
	return out
}

// searchCandidates lists what the searcher tries for a value shaped like
// shape (the solution's value), simplest first.
func searchCandidates(shape any, words []string) []any {
	switch x := shape.(type) {
	case bool:
		return []any{false, true}
	case json.Number:
		var out []any
		for i := range 10 {
			out = append(out, json.Number(strconv.Itoa(i)))
		}
		return out
	case string:
		var out []any
		for _, w := range words {
			out = append(out, w)
		}
		if _, err := strconv.Atoi(x); err == nil {
			for i := range 10 {
				if s := strconv.Itoa(i); !slices.Contains(words, s) {
					out = append(out, s)
				}
			}
		}
		return out
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		var lists [][]any
		for _, k := range keys {
			lists = append(lists, searchCandidates(x[k], words))
		}
		var out []any
		for _, tuple := range byRankSum(lists, searchMax) {
			m := map[string]any{}
			for i, k := range keys {
				m[k] = tuple[i]
			}
			out = append(out, m)
		}
		return out
	case []any:
		if len(x) == 0 {
			return []any{[]any{}}
		}
		return listsByRank(searchCandidates(x[0], words), searchMax)
	}
	return nil
}

// byRankSum are the tuples of one candidate of each list, ordered by the
// sum of their places in the lists (simplest first), at most max.
func byRankSum(lists [][]any, max int) [][]any {
	var out [][]any
	most := 0
	for _, l := range lists {
		if len(l) == 0 {
			return nil
		}
		most += len(l) - 1
	}
	var walk func(i, left int, tuple []any)
	walk = func(i, left int, tuple []any) {
		if len(out) >= max {
			return
		}
		if i == len(lists) {
			if left == 0 {
				out = append(out, slices.Clone(tuple))
			}
			return
		}
		for r := 0; r <= left && r < len(lists[i]); r++ {
			walk(i+1, left-r, append(tuple, lists[i][r]))
		}
	}
	for sum := 0; sum <= most && len(out) < max; sum++ {
		walk(0, sum, nil)
	}
	return out
}

// listsByRank are lists of elems' candidates, shortest and simplest
// first: ordered by the sum over their entries of 1 + the entry's place.
func listsByRank(elems []any, max int) []any {
	out := []any{[]any{}}
	var walk func(left int, list []any)
	walk = func(left int, list []any) {
		if len(out) >= max {
			return
		}
		if left == 0 {
			out = append(out, slices.Clone(list))
			return
		}
		for r := 1; r <= left && r <= len(elems); r++ {
			walk(left-r, append(list, elems[r-1]))
		}
	}
	for total := 1; len(out) < max && total <= 4*len(elems); total++ {
		walk(total, nil)
	}
	return out
}

// reachable reports whether every scalar of v is among the values the
// searcher tries.
func reachable(v any, words []string) bool {
	switch x := v.(type) {
	case bool:
		return true
	case json.Number:
		n, err := x.Int64()
		return err == nil && n >= 0 && n <= 9
	case string:
		if slices.Contains(words, x) {
			return true
		}
		n, err := strconv.Atoi(x)
		return err == nil && n >= 0 && n <= 9
	case map[string]any:
		for _, e := range x {
			if !reachable(e, words) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !reachable(e, words) {
				return false
			}
		}
		return true
	}
	return v == nil
}

// position is what a message says of where a list first goes wrong.
type position struct {
	kind byte // 0 nothing, '=' entry at (1-based) is wrong, '+' append after at, '<' keep at entries
	at   int
}

func positionIn(msgs []string) position {
	for _, m := range msgs {
		if s := posRightTo.FindStringSubmatch(m); s != nil {
			n, _ := strconv.Atoi(s[1])
			return position{'+', n}
		}
		if s := posFewerTo.FindStringSubmatch(m); s != nil {
			n, _ := strconv.Atoi(s[1])
			return position{'<', n}
		}
		if s := posAt.FindStringSubmatch(m); s != nil {
			n, _ := strconv.Atoi(s[1])
			return position{'=', n}
		}
		if s := posOrdinal.FindStringSubmatch(m); s != nil {
			return position{'=', slices.Index(ordinalWord, strings.ToLower(s[1])) + 1}
		}
		if posNone.MatchString(m) {
			return position{'+', 0}
		}
	}
	return position{}
}

// searchGroup is predictions the searcher searches together.
type searchGroup struct {
	names  []string
	all    bool    // no message names a prediction: every message is about every one
	tuples [][]any // whole candidates, made on first use
	cursor int
	// a list searched a position at a time: which, since when
	pos, cand int
	posSet    bool
	done      bool
}

// step moves the group's predictions in v to their next candidates, from
// what msgs (the messages about them) say; false when it has none left.
func (g *searchGroup) step(t *trialExercise, v map[string]any, msgs []string, words []string) bool {
	if len(g.names) == 1 {
		if l, ok := t.sol[g.names[0]].([]any); ok && len(l) > 0 {
			if p := positionIn(msgs); p.kind != 0 {
				return g.stepPosition(v, g.names[0], p, searchCandidates(l[0], words))
			}
		}
	}
	if g.tuples == nil {
		var lists [][]any
		for _, n := range g.names {
			lists = append(lists, searchCandidates(t.sol[n], words))
		}
		g.tuples = byRankSum(lists, searchMax)
	}
	for ; g.cursor < len(g.tuples); g.cursor++ {
		tuple := g.tuples[g.cursor]
		same := true
		for i, n := range g.names {
			if t.values(map[string]any{n: tuple[i]}) != t.values(map[string]any{n: v[n]}) {
				same = false
			}
		}
		if same {
			continue // what failed already
		}
		for i, n := range g.names {
			v[n] = cloneJSON(tuple[i])
		}
		g.cursor++
		return true
	}
	return false
}

func (g *searchGroup) stepPosition(v map[string]any, name string, p position, elems []any) bool {
	list, _ := v[name].([]any)
	list = slices.Clone(list)
	switch p.kind {
	case '<':
		if p.at <= len(list) {
			v[name] = list[:p.at]
			return true
		}
		return false
	case '+':
		if p.at > len(list) {
			return false
		}
		g.pos, g.cand, g.posSet = p.at, 0, true
		list = append(list[:p.at], elems[0])
	case '=':
		i := p.at - 1
		if i < 0 || i >= len(list) {
			return false
		}
		if g.posSet && i == g.pos {
			g.cand++
		} else {
			g.pos, g.cand, g.posSet = i, 0, true
		}
		for g.cand < len(elems) && cloneJSONEqual(elems[g.cand], list[i]) {
			g.cand++
		}
		if g.cand >= len(elems) {
			return false
		}
		list[i] = elems[g.cand]
	}
	v[name] = list
	return true
}

func cloneJSONEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// searcher plays the searcher; first are the checker's messages on the
// stub, its first run.
func (t *trialExercise) searcher(first []string) ([]string, error) {
	words := searchWords(t.task)
	for _, n := range t.names {
		if !reachable(t.sol[n], words) {
			return nil, nil // it never tries the answer
		}
	}
	v := cloneJSON(t.stub).(map[string]any)
	var groups []*searchGroup
	grouped := map[string]*searchGroup{}
	named := func(m string) []string {
		var out []string
		for _, n := range t.names {
			if containsWord(m, n) {
				out = append(out, n)
			}
		}
		return out
	}
	// The groups, from the first messages: predictions one message
	// names are searched together.
	anonymous := len(first) == 0
	for _, m := range first {
		if len(named(m)) == 0 {
			anonymous = true
		}
	}
	if anonymous {
		g := &searchGroup{names: t.names, all: true}
		groups = append(groups, g)
		for _, n := range t.names {
			grouped[n] = g
		}
	}
	msgs := first
	for runs := 1; runs < trialBudget; runs++ {
		for _, m := range msgs {
			ns := named(m)
			var g *searchGroup
			for _, n := range ns {
				if grouped[n] != nil {
					g = grouped[n]
				}
			}
			if g == nil && len(ns) > 0 {
				g = &searchGroup{}
				groups = append(groups, g)
			}
			for _, n := range ns {
				if grouped[n] == nil {
					g.names = append(g.names, n)
					grouped[n] = g
				}
			}
		}
		moved := false
		for _, g := range groups {
			if g.done {
				continue
			}
			var about []string
			for _, m := range msgs {
				if g.all || slices.ContainsFunc(g.names, func(n string) bool { return containsWord(m, n) }) {
					about = append(about, m)
				}
			}
			if len(about) == 0 {
				g.done = true // right: nothing says otherwise
				continue
			}
			if g.step(t, v, about, words) {
				moved = true
			} else {
				g.done = true
			}
		}
		if !moved {
			return nil, nil
		}
		pass, m, err := t.run(v)
		if err != nil {
			return nil, err
		}
		if pass {
			return []string{fmt.Sprintf("it can be solved by trial: a script that tries the page's quoted words, the numbers 0-9 and yes/no, and reads of the checker's messages only which predictions they name and where a list first goes wrong, passes it in %d runs (%d or fewer is trial); the messages must say what is wrong in the reasoning without locating it (which prediction, which entry), or the answer must hold a part that cannot be guessed",
				runs+1, trialBudget)}, nil
		}
		msgs = m
	}
	return nil, nil
}
