package terminal

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/informer-anatomy/informer-anatomy/demo/telemetry"
)

// Printer prints progress and lessons; --quiet silences it. Errors go to stderr
// whatever the mode.
type Printer struct {
	out, err io.Writer
	quiet    bool
	mu       sync.Mutex // one line at a time, also against the progress line
	live     bool       // a progress line is on screen, guarded by mu
}

func NewPrinter(out, err io.Writer, quiet bool) *Printer {
	return &Printer{out: out, err: err, quiet: quiet}
}

func (u *Printer) Println(s string) {
	if u.quiet {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.clearLine_locked()
	fmt.Fprintln(u.out, s)
}

// clearLine_locked erases the progress line, if one is on screen, so the
// next line does not print over it.
func (u *Printer) clearLine_locked() {
	if u.live {
		fmt.Fprint(u.err, "\r\033[K")
		u.live = false
	}
}

func (u *Printer) Status(format string, args ...any) { u.Println("· " + fmt.Sprintf(format, args...)) }

func (u *Printer) Lesson(name, text string) { u.Println(fmt.Sprintf("▶ %s: %s", name, text)) }

// Warn is for trouble the run survives (a watch error it retries): always shown.
func (u *Printer) Warn(format string, args ...any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.clearLine_locked()
	fmt.Fprintf(u.err, "trace-demo: %s\n", Safe(fmt.Sprintf(format, args...)))
}

// Progress redraws one line on a terminal with the spans recorded so far;
// not on a pipe or a file, where it would only add noise.
func (u *Printer) Progress(c *telemetry.Collector) (stop func()) {
	f, ok := u.err.(*os.File)
	if u.quiet || !ok || !isTerminal(f) {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		start := time.Now()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			u.mu.Lock()
			fmt.Fprintf(u.err, "\r\033[K  … %s, %d spans recorded", time.Since(start).Round(100*time.Millisecond), c.Count())
			u.live = true
			u.mu.Unlock()
		}
	})
	return func() {
		close(done)
		wg.Wait()
		u.mu.Lock()
		u.clearLine_locked()
		u.mu.Unlock()
	}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Safe returns s with every character a terminal would obey rather
// than show escaped as Go does in a quoted string (\x1b, \n, \u202e): C0
// and C1 controls, DEL, and the bidirectional overrides that reorder what
// is shown. A message from an API server, or an object's name, must not
// move the cursor, recolour the screen or fake a line of the demo's own.
func Safe(s string) string {
	return escapeControls(s, false)
}

// escapeControls is Safe; with keepNewlines, "\n" passes.
func escapeControls(s string, keepNewlines bool) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || (r != '\t' && !(keepNewlines && r == '\n') && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r))) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case r == '\t', keepNewlines && r == '\n':
			b.WriteRune(r)
		case unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r):
			q := strconv.QuoteRuneToASCII(r) // '\x1b', '\n', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	return b.String()
}

// SafeWriter writes through w what it is given with control characters
// escaped (escapeControls), keeping line breaks. A character split across
// two writes is held until it is whole.
type SafeWriter struct {
	W       io.Writer
	partial []byte
}

func (s *SafeWriter) Write(p []byte) (int, error) {
	buf := append(s.partial, p...)
	end := len(buf)
	// Hold back an incomplete character at the end (at most 3 bytes).
	for i := 1; i <= 3 && i <= len(buf); i++ {
		if utf8.RuneStart(buf[len(buf)-i]) {
			if !utf8.FullRune(buf[len(buf)-i:]) {
				end = len(buf) - i
			}
			break
		}
	}
	s.partial = append([]byte(nil), buf[end:]...)
	if _, err := io.WriteString(s.W, escapeControls(string(buf[:end]), true)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// FirstLine is err's message up to its first line break: an exporter joins
// one error per span, and a full disk must not print one line per span.
func FirstLine(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		n := strings.Count(msg, "\n")
		return fmt.Sprintf("%s (and %d more like it)", msg[:i], n)
	}
	return msg
}
