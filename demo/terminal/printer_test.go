package terminal_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/demo/terminal"
)

// The escaping: controls, DEL, C1 and bidi overrides escaped, the rest
// (tabs, accents, box drawing) as is; standard output keeps its line breaks.
func TestTerminalSafe(t *testing.T) {
	assert.Equal(t, `a\x1b[2Jb\r\nc\x7f\u009b\u202e\xff`, terminal.Safe("a\x1b[2Jb\r\nc\x7f\u009b\u202e\xff"))
	assert.Equal(t, "ünïcode ━━ ├─\tok", terminal.Safe("ünïcode ━━ ├─\tok"))
	var b bytes.Buffer
	w := &terminal.SafeWriter{W: &b}
	// A character split across writes stays whole.
	for _, p := range [][]byte{[]byte("line 1 \x1b[31m\n├"), []byte("─ \xe2"), []byte("\x94\x80\n")} {
		_, err := w.Write(p)
		require.NoError(t, err)
	}
	assert.Equal(t, "line 1 \\x1b[31m\n├─ ─\n", b.String())
}
