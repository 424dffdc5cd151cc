package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"unicode"
)

// The answer of an exercise, as the selfcheck knows it, is what the
// participant could copy from a checker to pass without thinking:
//
//   - for a predict or investigate exercise, the values of its solution's
//     exported variables (the predictions), rendered the ways a checker
//     prints them (%v, %+v, %#v, %q, and each string of a list). The
//     selfcheck gets them by compiling a small test into the exercise
//     package (answersFile) and running it with the stub and with the
//     solution: real values, not a parse of the source;
//   - for a build exercise, the lines of its solution's code that the stub
//     does not have.
//
// A checker run on the stub must say what was wrong in the reasoning
// (it need not, and for a guessable value must not, name which
// prediction: trial.go) and must not print the answer. A rendering that is specific enough (a quoted string,
// a list, a string with more than letters) must appear nowhere in the
// output; a plain one (a number, true, a word) must not appear as a word in
// a message that names the variable, where it would read as the answer.

// answersEnv names the directory the answers test writes into.
const answersEnv = "WORKSHOP_SELFCHECK_ANSWERS"

// answersTest is answersFile's test function.
const answersTest = "TestWorkshopSelfcheckAnswers"

// setEnv names the JSON object of predictions the answers test sets
// before the checker runs (trial.go).
const setEnv = "WORKSHOP_SELFCHECK_SET"

// answersFile is compiled into each predict and investigate exercise's
// package, in the selfcheck's temporary copy only. Its name sorts first,
// so that it runs before a checker that might crash the test binary.
const answersFile = "aaa_selfcheck_answers_test.go"

var answersTemplate = template.Must(template.New("").Parse(`//go:build workshop

package {{.Package}}

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// Written by the workshop's selfcheck into its temporary copy: with
// {{.SetEnv}} set (a JSON object), the predictions it names take those
// values before any test runs, so that one test binary can try many
// answers (the trial attacks of trial.go).
func init() {
	s := os.Getenv("{{.SetEnv}}")
	if s == "" {
		return
	}
	var set map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &set); err != nil {
		panic(err)
	}
	ptrs := map[string]any{ {{range .Names}}"{{.}}": &{{.}}, {{end}} }
	for name, raw := range set {
		p, ok := ptrs[name]
		if !ok {
			panic("selfcheck: no prediction " + name)
		}
		v := reflect.New(reflect.TypeOf(p).Elem())
		if err := json.Unmarshal(raw, v.Interface()); err != nil {
			panic(err)
		}
		reflect.ValueOf(p).Elem().Set(v.Elem())
	}
}

func TestWorkshopSelfcheckAnswers(t *testing.T) {
	dir := os.Getenv("{{.Env}}")
	if dir == "" {
		return
	}
	out := map[string]map[string]any{}
	for name, v := range map[string]any{ {{range .Names}}"{{.}}": {{.}}, {{end}} } {
		rv := reflect.ValueOf(v)
		r := map[string]any{"kind": rv.Kind().String(), "v": fmt.Sprintf("%v", v), "+v": fmt.Sprintf("%+v", v), "#v": fmt.Sprintf("%#v", v)}
		if j, err := json.Marshal(v); err == nil {
			r["json"] = string(j)
		}
		if rv.Kind() == reflect.String {
			r["q"] = fmt.Sprintf("%q", v)
		}
		if (rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array) && rv.Type().Elem().Kind() == reflect.String {
			r["q"] = fmt.Sprintf("%q", v)
			var elems []string
			for i := 0; i < rv.Len(); i++ {
				elems = append(elems, rv.Index(i).String())
			}
			r["elems"] = elems
		}
		out[name] = r
	}
	b, err := json.Marshal(out)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "{{.File}}.json"), b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}
`))

// rendering is one prediction's value as answersFile writes it.
type rendering struct {
	Kind   string   `json:"kind"`
	V      string   `json:"v"`
	PlusV  string   `json:"+v"`
	SharpV string   `json:"#v"`
	Q      string   `json:"q"`
	Elems  []string `json:"elems"`
	JSON   string   `json:"json"` // the value as JSON, which the trial attacks set
}

// answerKey names e's file of renderings.
func answerKey(e *Exercise) string { return e.Chapter + "__" + e.Dir }

// predictions are the exported package-level variables of e's solution.
func predictions(root string, e *Exercise) (pkg string, names []string, err error) {
	for _, f := range e.Files {
		pf, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, e.SolutionPath(), f), nil, 0)
		if err != nil {
			return "", nil, err
		}
		pkg = pf.Name.Name
		for _, d := range pf.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						if n.IsExported() {
							names = append(names, n.Name)
						}
					}
				}
			}
		}
	}
	return pkg, names, nil
}

// writeAnswersTest puts answersFile into e's package under root.
func writeAnswersTest(root string, e *Exercise) error {
	pkg, names, err := predictions(root, e)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("%s: its solution has no exported variable: nothing to predict", e.Name())
	}
	f, err := os.Create(filepath.Join(root, e.Path(), answersFile))
	if err != nil {
		return err
	}
	defer f.Close()
	return answersTemplate.Execute(f, map[string]any{"Package": pkg, "Env": answersEnv, "Names": names, "File": answerKey(e), "SetEnv": setEnv})
}

// readRenderings reads what answersFile wrote for e into dir.
func readRenderings(dir string, e *Exercise) (map[string]rendering, error) {
	b, err := os.ReadFile(filepath.Join(dir, answerKey(e)+".json"))
	if err != nil {
		return nil, fmt.Errorf("the answers test wrote nothing (did the test binary crash before it ran?): %v", err)
	}
	var r map[string]rendering
	return r, json.Unmarshal(b, &r)
}

// predictionLeaks checks a stub's checker output against the solution's
// predictions: for each prediction the stub gets wrong, the output must
// say something, and must not show its answer.
func predictionLeaks(stub, sol map[string]rendering, messages, output []string) []string {
	var problems []string
	all := strings.Join(output, "\n") + "\n" + strings.Join(messages, "\n")
	names := slices.Sorted(maps.Keys(sol))
	stubs := held(stub)
	wrong := 0
	for _, name := range names {
		s, ok := stub[name]
		a := sol[name]
		if ok && s.SharpV == a.SharpV {
			continue // the stub has it right: nothing to say
		}
		wrong++
		for _, tok := range specific(a, stubs) {
			if strings.Contains(all, tok) {
				problems = append(problems, fmt.Sprintf("the checker's output gives %s's answer away: %s", name, tok))
			}
		}
		for _, tok := range plain(a) {
			for _, m := range messages {
				if containsWord(m, name) && containsWord(m, tok) {
					problems = append(problems, fmt.Sprintf("the checker's message about %s gives its answer away (%s): %q", name, tok, m))
					break
				}
			}
		}
	}
	// A message that names yes/no predictions and nothing else tells
	// which value to flip.
	for _, m := range messages {
		var yesNo []string
		other := false
		for _, name := range names {
			if containsWord(m, name) {
				if sol[name].Kind == "bool" {
					yesNo = append(yesNo, name)
				} else {
					other = true
				}
			}
		}
		if len(yesNo) > 0 && !other {
			problems = append(problems, fmt.Sprintf("the checker's message names the yes/no prediction %s on its own, which says which value to flip: %q", strings.Join(yesNo, " and "), m))
		}
	}
	if wrong == 0 {
		problems = append(problems, "the stub's predictions are all the solution's: there is nothing to predict")
	} else if len(messages) == 0 {
		// A message need not name the prediction (naming which value is
		// wrong lets a guess replace the reasoning: trial.go), but it
		// must say what was wrong.
		problems = append(problems, "the stub gets predictions wrong, but the checker says nothing about what was wrong")
	}
	return problems
}

// held is every rendering of every value the stub holds. What the stub
// holds is printed as "you predicted …": never a leak, even where it
// happens to be another prediction's answer.
func held(stub map[string]rendering) map[string]bool {
	stubs := map[string]bool{}
	for _, r := range stub {
		for _, x := range append([]string{r.V, r.PlusV, r.SharpV, r.Q}, r.Elems...) {
			stubs[x] = true
		}
	}
	return stubs
}

// specific are the renderings of an answer that are specific enough to be
// looked for anywhere: quoted strings, lists and structs, and strings
// with more than letters in them (except what the stub holds).
func specific(a rendering, stub map[string]bool) []string {
	var out []string
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) && !stub[s] {
			out = append(out, s)
		}
	}
	switch a.Kind {
	case "string":
		add(a.Q)
		if notJustLetters(a.V) {
			add(a.V)
		}
	case "slice", "array", "struct", "map":
		for _, r := range []string{a.V, a.PlusV, a.SharpV, a.Q} {
			if len(r) >= 4 {
				add(r)
			}
		}
		for _, el := range a.Elems {
			if el != "" {
				add(fmt.Sprintf("%q", el))
				if notJustLetters(el) {
					add(el)
				}
			}
		}
	}
	return out
}

// plain are the renderings of a scalar answer that are words anyone may
// write (3, true, informer): they are looked for only in the messages
// about that prediction.
func plain(a rendering) []string {
	switch a.Kind {
	case "string":
		if a.V != "" && !notJustLetters(a.V) {
			return []string{a.V}
		}
		return nil
	case "slice", "array", "struct", "map":
		return nil
	}
	return []string{a.V}
}

// notJustLetters reports whether s has a character other than a letter
// and is long enough to be looked for: "last known", "*kit.Recorder#1".
func notJustLetters(s string) bool {
	return len(s) >= 3 && strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
}

// containsWord reports whether w occurs in s not as part of a longer word
// or number.
func containsWord(s, w string) bool {
	return regexp.MustCompile(`(^|[^\pL\pN_])` + regexp.QuoteMeta(w) + `($|[^\pL\pN_])`).MatchString(s)
}

// codeLeaks checks a build exercise's stub output against the lines of
// the solution's code that the stub lacks.
func codeLeaks(root string, e *Exercise, output []string) []string {
	var problems []string
	all := strings.Join(output, "\n")
	lines := 0
	for _, f := range e.Files {
		sol, err1 := os.ReadFile(filepath.Join(root, e.SolutionPath(), f))
		stub, err2 := os.ReadFile(filepath.Join(root, e.Path(), f))
		if err1 != nil || err2 != nil {
			return []string{fmt.Sprintf("cannot read %s: %v %v", f, err1, err2)}
		}
		have := map[string]bool{}
		for _, l := range strings.Split(string(stub), "\n") {
			have[strings.TrimSpace(l)] = true
		}
		for _, l := range strings.Split(string(sol), "\n") {
			l = strings.TrimSpace(l)
			if len(l) < 12 || have[l] || strings.HasPrefix(l, "//") {
				continue
			}
			lines++
			if strings.Contains(all, l) {
				problems = append(problems, "the checker's output shows a line of the solution: "+l)
			}
		}
	}
	if lines == 0 {
		problems = append(problems, "its solution has no line of code the stub lacks: there is nothing to build")
	}
	return problems
}
