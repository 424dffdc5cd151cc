package livepage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// channelLabels are the literals app.js may spell although a span has the
// same name: the listener's channel (processorListener.addCh in chapter
// 5), which labels the pipeline's boxes (data-k, read by test/browser) and
// the process view's columns, counted from the state and there whether or
// not anything is traced. The waterfall (openWaterfall) may not spell it:
// there it would be a span name.
var channelLabels = map[string]bool{"addCh": true}

// TestAppNamesNoSpan: app.js spells no span name, event name or
// attribute key of internal/tracing in a string literal; the waterfall
// takes them from the server (WaterfallSpan's Name, AttrText, Wait), so a
// name renamed or added in Go cannot leave the page behind. A literal
// that equals a name, starts with one of the names that are prefixes
// ("ListAndWatch ", "Indexer."), or is the namespace of some keys
// ("informer.") fails.
func TestAppNamesNoSpan(t *testing.T) {
	names := tracingNames(t)
	src, err := os.ReadFile(filepath.Join("assets", "app.js"))
	require.NoError(t, err)
	lits, braces, err := jsScan(string(src))
	require.NoError(t, err)
	require.Greater(t, len(lits), 100, "found too few literals in app.js: has the scanner lost its way?")
	wfStart, wfEnd := jsFunction(t, string(src), braces, "function openWaterfall(")

	used := map[string]bool{}
	for _, l := range lits {
		name, ok := spanName(l.text, names)
		if !ok {
			continue
		}
		inWaterfall := l.offset >= wfStart && l.offset < wfEnd
		if channelLabels[l.text] && !inWaterfall {
			used[l.text] = true
			continue
		}
		t.Errorf("app.js:%d: the literal %q spells %s (internal/tracing); take it from the server instead (internal/livepage's WaterfallSpan)",
			l.line, l.text, name)
	}
	for c := range channelLabels {
		assert.True(t, used[c], "channelLabels lists %q, which app.js no longer spells: drop it from the list", c)
	}
}

// spanName says which of names the literal s spells, if any.
func spanName(s string, names map[string]string) (string, bool) {
	if s == "" {
		return "", false
	}
	if c, ok := names[s]; ok {
		return c, true
	}
	for v, c := range names {
		// A prefix name ("ListAndWatch ", "Indexer."): every span it
		// begins is a name of the contract.
		if (strings.HasSuffix(v, " ") || strings.HasSuffix(v, ".")) && strings.HasPrefix(s, v) {
			return c, true
		}
		// A key's namespace ("informer."), as in cutting it off a key.
		if strings.HasSuffix(s, ".") && strings.HasPrefix(v, s) {
			return "the namespace of keys such as " + c, true
		}
	}
	return "", false
}

// tracingNames are the values of internal/tracing's exported string
// constants (span and event names, attribute keys, the annotation), each
// with its constant's name, read from the package's source so that a name
// added there is checked here without a list to keep.
func tracingNames(t *testing.T) map[string]string {
	t.Helper()
	names := map[string]string{}
	for name, v := range testutil.StringConsts(t, filepath.Join("..", "tracing")) {
		names[v] = "tracing." + name
	}
	require.Greater(t, len(names), 30, "found too few names in internal/tracing: has its layout changed?")
	return names
}

// jsLiteral is a string literal of app.js, or one static piece of a
// template literal (between its ${…}).
type jsLiteral struct {
	text   string // as written, escapes not undone (app.js's names have none)
	offset int
	line   int
}

// jsScan returns app.js's string literals and the offsets of its braces
// outside literals and comments. It knows comments, the three kinds of
// quotes and template substitutions, nested; app.js has no regular
// expression literal, so a / that opens no comment is a division. A string
// that runs to the end of its line or of the file (a scanner gone astray)
// is an error.
func jsScan(src string) (lits []jsLiteral, braces []int, err error) {
	line := func(i int) int { return strings.Count(src[:i], "\n") + 1 }
	i := 0
	// code scans code until the } that closes a template substitution
	// (inSub) or the end; it returns the offset after that }.
	var code func(inSub bool) (int, error)
	code = func(inSub bool) (int, error) {
		depth := 0
		for i < len(src) {
			c := src[i]
			switch {
			case strings.HasPrefix(src[i:], "//"):
				if n := strings.IndexByte(src[i:], '\n'); n >= 0 {
					i += n
				} else {
					i = len(src)
				}
			case strings.HasPrefix(src[i:], "/*"):
				n := strings.Index(src[i+2:], "*/")
				if n < 0 {
					return 0, fmt.Errorf("app.js:%d: unterminated comment", line(i))
				}
				i += 2 + n + 2
			case c == '"' || c == '\'':
				start := i + 1
				i++
				for i < len(src) && src[i] != c {
					if src[i] == '\\' {
						i++
					} else if src[i] == '\n' {
						return 0, fmt.Errorf("app.js:%d: string runs past its line", line(start))
					}
					i++
				}
				if i >= len(src) {
					return 0, fmt.Errorf("app.js:%d: unterminated string", line(start))
				}
				lits = append(lits, jsLiteral{src[start:i], start, line(start)})
				i++
			case c == '`':
				i++
				start := i
				for {
					if i >= len(src) {
						return 0, fmt.Errorf("app.js:%d: unterminated template", line(start))
					}
					if src[i] == '\\' {
						i += 2
						continue
					}
					if src[i] == '`' {
						lits = append(lits, jsLiteral{src[start:i], start, line(start)})
						i++
						break
					}
					if strings.HasPrefix(src[i:], "${") {
						lits = append(lits, jsLiteral{src[start:i], start, line(start)})
						i += 2
						if _, err := code(true); err != nil {
							return 0, err
						}
						start = i
						continue
					}
					i++
				}
			case c == '{':
				braces = append(braces, i)
				depth++
				i++
			case c == '}':
				if inSub && depth == 0 {
					i++
					return i, nil
				}
				braces = append(braces, i)
				depth--
				i++
			default:
				i++
			}
		}
		if inSub {
			return 0, fmt.Errorf("unterminated template substitution")
		}
		return i, nil
	}
	_, err = code(false)
	return lits, braces, err
}

// jsFunction is the span of app.js from header to the } that closes the
// function's body.
func jsFunction(t *testing.T, src string, braces []int, header string) (start, end int) {
	t.Helper()
	start = strings.Index(src, header)
	require.GreaterOrEqual(t, start, 0, "app.js has no %q", header)
	depth := 0
	for _, b := range braces {
		if b < start {
			continue
		}
		if src[b] == '{' {
			depth++
			continue
		}
		depth--
		if depth == 0 {
			return start, b + 1
		}
	}
	t.Fatalf("app.js: %q never closes", header)
	return 0, 0
}
