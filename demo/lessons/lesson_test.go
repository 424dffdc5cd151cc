package lessons

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every lesson of the table is whole: a name, a line, what to look for, a
// run; names and Order values are unique, and the script runs the lessons
// in their Order. Nothing here names a lesson: the table is what the
// lesson files register (TestALessonIsOneFile), so a new lesson is checked
// without touching this file.
func TestEveryLessonIsWhole(t *testing.T) {
	require.NotEmpty(t, registry)
	names, orders := map[string]bool{}, map[int]string{}
	for _, l := range registry {
		assert.NotEmpty(t, l.Name)
		assert.False(t, names[l.Name], "two lessons named %s", l.Name)
		names[l.Name] = true
		if other, dup := orders[l.Order]; dup {
			// A tie would leave the script's order to the order of the
			// files' init functions.
			t.Errorf("lessons %s and %s have the same Order %d", other, l.Name, l.Order)
		}
		orders[l.Order] = l.Name
		assert.NotNil(t, l.Run, l.Name)
		require.NotNil(t, l.Text, l.Name)
		assert.NotEmpty(t, l.Text(&Env{thirdName: "*demo.slowHandler"}), l.Name)
		assert.True(t, strings.HasPrefix(l.LookFor, "  Look for: "), "%s: %q", l.Name, l.LookFor)
	}
	// The script (Names, what "all" runs) is the non-opt-in lessons by
	// Order, the opt-in ones (OptInNames) likewise.
	byOrder := slices.SortedFunc(slices.Values(registry), func(a, b Lesson) int { return a.Order - b.Order })
	var script, optIn []string
	for _, l := range byOrder {
		if l.OptIn {
			optIn = append(optIn, l.Name)
		} else {
			script = append(script, l.Name)
		}
	}
	require.NotEmpty(t, script, "no lesson runs in the script")
	assert.Equal(t, script, Names())
	assert.Equal(t, optIn, OptInNames())
	for _, l := range Lessons() {
		assert.False(t, l.OptIn, l.Name)
	}
	assert.Equal(t, script, lessonNames(Lessons()))
}

func lessonNames(ls []Lesson) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Name)
	}
	return out
}

// registration is one register call found in the package's source.
type registration struct {
	file  string
	name  string // the Name field, "" when it is not a string literal
	calls int    // register calls in the file
}

// registrations reads every non-test file of the package and returns, per
// file that calls register, what it registers.
func registrations(t *testing.T) map[string]registration {
	t.Helper()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	out := map[string]registration{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "register" {
				return true
			}
			r := out[f]
			r.file = f
			r.calls++
			if len(call.Args) == 1 {
				if lit, ok := call.Args[0].(*ast.CompositeLit); ok {
					for _, el := range lit.Elts {
						kv, ok := el.(*ast.KeyValueExpr)
						if !ok {
							continue
						}
						if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Name" {
							if v, ok := kv.Value.(*ast.BasicLit); ok && v.Kind == token.STRING {
								r.name, _ = strconv.Unquote(v.Value)
							}
						}
					}
				}
			}
			out[f] = r
			return true
		})
	}
	return out
}

// A lesson is one file: each lesson_<name>.go registers exactly one
// lesson, named <name> (with - for _), as a literal; no other file
// registers one; and the table holds exactly the lessons the files
// register. A lesson file that registers nothing, or two lessons, or a
// misnamed one, and a lesson registered from elsewhere, fail here.
func TestALessonIsOneFile(t *testing.T) {
	regs := registrations(t)
	files, err := filepath.Glob("lesson_*.go")
	require.NoError(t, err)
	want := map[string]string{} // lesson name → its file
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		name := strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(f, "lesson_"), ".go"), "_", "-")
		want[name] = f
		r := regs[f]
		if !assert.Equal(t, 1, r.calls, "%s must register exactly one lesson", f) {
			continue
		}
		assert.Equal(t, name, r.name, "%s registers a lesson named after its file (a string literal)", f)
	}
	require.NotEmpty(t, want, "no lesson_*.go file")
	for f, r := range regs {
		_, isLesson := want[r.name]
		assert.True(t, strings.HasPrefix(f, "lesson_") && isLesson, "%s registers a lesson, %q: only its lesson_<name>.go may", f, r.name)
	}
	assert.Equal(t, slices.Sorted(maps.Keys(want)), slices.Sorted(slices.Values(lessonNames(registry))), "the table holds the lessons of the lesson_*.go files")
}

// ControllerListener is what the live view matches the controller lesson's
// row by: it must be the handler's real type name, which moves with the
// package (it was *demo.controllerHandler before the lessons had a
// package of their own).
func TestControllerListenerIsTheHandlersType(t *testing.T) {
	assert.Equal(t, ControllerListener, fmt.Sprintf("%T#", &controllerHandler{}))
}
