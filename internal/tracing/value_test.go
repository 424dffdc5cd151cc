package tracing

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharesMemory: a's bytes lie inside b's.
func sharesMemory(a, b string) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.StringData(a))), uintptr(unsafe.Pointer(unsafe.StringData(b)))
	return pa >= pb && pa < pb+uintptr(len(b))
}

// The values a writer of a watched object can choose, each made safe: what
// Cut returns is valid UTF-8, has no control character, is at most the
// limit, keeps every whole character it can, and shares no memory with
// its input.
func TestCutMakesEveryValueSafe(t *testing.T) {
	cases := []struct {
		name, in string
		limit    int
		want     string
	}{
		{"plain, whole", "ns/web-1", 64, "ns/web-1"},
		{"exactly the limit", strings.Repeat("a", 64), 64, strings.Repeat("a", 64)},
		// The value: a byte cut at 64 kept half of "é".
		{"63 bytes then é", strings.Repeat("a", 63) + "é", 64, strings.Repeat("a", 61) + "…"},
		{"é across the limit, whole at 65", strings.Repeat("a", 63) + "é", 65, strings.Repeat("a", 63) + "é"},
		{"invalid bytes", "a\xffb\xc3", 64, "a\uFFFDb\uFFFD"},
		{"control characters", "a\x1b[2Jb\rc\x00d\u0085", 64, "a\uFFFD[2Jb\uFFFDc\uFFFDd\uFFFD"},
		{"a tab and a newline", "a\tb\n", 64, "a\uFFFDb\uFFFD"},
		{"replacements push it over", strings.Repeat("\xff", 30), 64, strings.Repeat("\uFFFD", 20) + "…"},
		{"U+FFFD itself is kept", "\uFFFD", 64, "\uFFFD"},
		{"long", strings.Repeat("x", 200<<10), 64, strings.Repeat("x", 61) + "…"},
		{"long, four-byte characters", strings.Repeat("𝄞", 100), 64, strings.Repeat("𝄞", 15) + "…"},
		{"empty", "", 64, ""},
		{"a limit below 4 is 4", "abcdef", 1, "a…"},
	}
	for _, c := range cases {
		got := Cut(c.in, c.limit)
		assert.Equal(t, c.want, got, c.name)
		assert.True(t, utf8.ValidString(got), "%s: valid UTF-8", c.name)
		assert.LessOrEqual(t, len(got), max(c.limit, 4), "%s: bounded", c.name)
		assert.False(t, strings.ContainsFunc(got, unicode.IsControl), "%s: no control character", c.name)
		assert.False(t, sharesMemory(got, c.in), "%s: a copy, not a piece of the input", c.name)
	}
}

// Value bounds at MaxValueBytes, which a real object key always fits in:
// a 63-byte namespace, "/", a 253-byte name.
func TestValueKeepsEveryRealKeyWhole(t *testing.T) {
	key := strings.Repeat("n", 63) + "/" + strings.Repeat("a.", 126) + "b"
	require.Len(t, key, 317)
	assert.Equal(t, key, Value(key))
	long := strings.Repeat("k", 100_000)
	assert.Len(t, Value(long), MaxValueBytes)
	assert.True(t, strings.HasSuffix(Value(long), "…"))
}

// An unparsable traceparent annotation is put on the root's event through
// Cut: the value (63 ASCII bytes and "é", cut at byte 64 it left
// half a character, which failed the OTLP export of its whole batch), a
// long one (whose 64-byte piece kept all of it alive), invalid bytes and
// control characters.
func TestIgnoredTraceparentIsSafe(t *testing.T) {
	for name, value := range map[string]string{
		"63 bytes then é":    strings.Repeat("a", 63) + "é",
		"200 KB":             strings.Repeat("z", 200<<10),
		"invalid UTF-8":      "00-\xff\xfe-\xc3",
		"control characters": "00-\x1b]0;owned\x07-\r\n-01",
	} {
		_, ignored, present := Traceparent(withAnnotation(&value))
		require.True(t, present, name)
		assert.NotEmpty(t, ignored, name)
		assert.True(t, utf8.ValidString(ignored), "%s: valid UTF-8: %q", name, ignored)
		assert.LessOrEqual(t, len(ignored), maxIgnoredValue, name)
		assert.False(t, strings.ContainsFunc(ignored, unicode.IsControl), "%s: %q", name, ignored)
		assert.False(t, sharesMemory(ignored, value), "%s: the event's value is a copy, not a piece of the annotation", name)
	}
}

// Cut allocates once, whatever it is given: it never copies a long value
// whole to make it valid first.
func TestCutAllocatesOnce(t *testing.T) {
	long := "\xff" + strings.Repeat("x", 200<<10)
	for _, s := range []string{"ns/name", long, strings.Repeat("a", 63) + "é"} {
		assert.Equal(t, 1.0, testing.AllocsPerRun(50, func() { _ = Cut(s, 64) }), "%.20q", s)
	}
}
