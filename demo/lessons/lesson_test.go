package lessons

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every lesson of the table is whole: a name, a line, what to look for, a
// run; names are unique and the script's order is the documented one.
func TestEveryLessonIsWhole(t *testing.T) {
	require.NotEmpty(t, registry)
	seen := map[string]bool{}
	for _, l := range registry {
		assert.NotEmpty(t, l.Name)
		assert.False(t, seen[l.Name], "two lessons named %s", l.Name)
		seen[l.Name] = true
		assert.NotNil(t, l.Run, l.Name)
		require.NotNil(t, l.Text, l.Name)
		assert.NotEmpty(t, l.Text(&Env{thirdName: "*demo.slowHandler"}), l.Name)
		assert.True(t, strings.HasPrefix(l.LookFor, "  Look for: "), "%s: %q", l.Name, l.LookFor)
	}
	assert.True(t, slices.IsSortedFunc(registry, func(a, b Lesson) int { return a.Order - b.Order }))
	assert.Equal(t, []string{"basic", "coalesce", "order", "slow-handler", "relist", "fallback", "late-handler", "resync"}, Names())
	assert.Equal(t, []string{"controller", "handoff"}, OptInNames())
	for _, l := range Lessons() {
		assert.False(t, l.OptIn, l.Name)
	}
}

// The package comment names the lessons in script order, and the opt-in
// ones: prose and table cannot drift apart.
func TestDocNamesTheLessonsInOrder(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	text := strings.Join(strings.Fields(strings.ReplaceAll(string(doc), "//", "")), " ")
	m := regexp.MustCompile(`In script order: ([a-z, -]+); and ([a-z -]+?), which run only when named`).FindStringSubmatch(text)
	require.NotNil(t, m, "doc.go's lesson list")
	assert.Equal(t, Names(), strings.Split(m[1], ", "))
	assert.Equal(t, OptInNames(), strings.Split(m[2], " and "))
}

// A lesson file is all a new lesson takes: each registered lesson lives in
// lesson_<name>.go.
func TestEachLessonHasItsFile(t *testing.T) {
	for _, l := range registry {
		f := "lesson_" + strings.ReplaceAll(l.Name, "-", "_") + ".go"
		src, err := os.ReadFile(f)
		require.NoError(t, err, "lesson %s", l.Name)
		assert.Regexp(t, `Name:\s+"`+regexp.QuoteMeta(l.Name)+`"`, string(src), "%s registers %s", f, l.Name)
	}
}

// ControllerListener is what the live view matches the controller lesson's
// row by: it must be the handler's real type name, which moves with the
// package (it was *demo.controllerHandler before the lessons had a
// package of their own).
func TestControllerListenerIsTheHandlersType(t *testing.T) {
	assert.Equal(t, ControllerListener, fmt.Sprintf("%T#", &controllerHandler{}))
}
