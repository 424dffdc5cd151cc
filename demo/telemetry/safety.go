package telemetry

// What the demo prints about where its spans go, and the file it writes
// them to, made safe for a room (ours: no upstream counterpart). An
// endpoint URL may carry credentials (user:password@, ?token=): they are
// masked wherever the URL is printed. A collector's error may carry its
// whole response body: it is cut to one line of reasonable length. And
// --out is written to a temporary file beside it, renamed over it only
// once a span is in it: a run that fails before its first span leaves the
// file the user had as it was.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxMessage is the most of a collector's (or any exporter's) message the
// demo prints, in bytes.
const MaxMessage = 300

// masked stands for a secret taken out of a URL.
const masked = "***"

// MaskURL returns raw with its userinfo and its query values (and any
// fragment) replaced by ***: the path and the query's keys stay, so the
// reader still sees where the spans go. A value Go does not read as a URL
// with a host (one without a scheme, "alice:S3CRETPW@host:4318", which
// url.Parse takes for scheme "alice" and an opaque rest) is masked
// loosely: everything before its last "@", and everything after a "?"
// or "#".
func MaskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || (u.Host == "" && strings.Contains(raw, "@")) {
		return maskLoosely(raw)
	}
	if u.User != nil {
		u.User = url.User(masked)
	}
	if u.RawQuery != "" {
		q := u.Query()
		keys := make([]string, 0, len(q))
		for k := range q {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, url.QueryEscape(k)+"="+masked)
		}
		if len(parts) == 0 {
			parts = []string{masked}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	if u.Fragment != "" || u.RawFragment != "" {
		u.Fragment, u.RawFragment = masked, ""
	}
	// url.User's *** is escaped by String; put it back.
	return strings.Replace(u.String(), "%2A%2A%2A@", masked+"@", 1)
}

// maskLoosely masks a value that is not a URL Go reads: whatever precedes
// its last "@" (after a "scheme://", kept) is taken for userinfo, the
// password with whatever characters it has; whatever follows "?" or "#"
// for a query or fragment. It may mask more than a secret, never less.
func maskLoosely(raw string) string {
	prefix, rest := "", raw
	if i := strings.Index(rest, "://"); i >= 0 {
		prefix, rest = rest[:i+3], rest[i+3:]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = masked + rest[i:]
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i+1] + masked
	}
	return prefix + rest
}

var urlInText = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)

// MaskURLs masks every URL in s (MaskURL).
func MaskURLs(s string) string {
	return urlInText.ReplaceAllStringFunc(s, MaskURL)
}

// OneLine is s's first line, cut to MaxMessage bytes (on a rune boundary),
// saying how much was left out.
func OneLine(s string) string {
	more := 0
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		more = len(s) - i
		s = strings.TrimRight(s[:i], "\r")
	}
	if len(s) > MaxMessage {
		cut := MaxMessage
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		more += len(s) - cut
		s = s[:cut]
	}
	if more > 0 {
		return fmt.Sprintf("%s… (%d more bytes)", s, more)
	}
	return s
}

// tidyError is an error whose text is masked and cut, and which still
// unwraps to the original.
type tidyError struct {
	msg string
	err error
}

func (e *tidyError) Error() string { return e.msg }
func (e *tidyError) Unwrap() error { return e.err }

// tidy masks err's URLs and cuts it to one line.
func tidy(err error) error {
	if err == nil {
		return nil
	}
	return &tidyError{msg: OneLine(MaskURLs(err.Error())), err: err}
}

// openOut opens where --out's spans go: a device or pipe as it is (written
// in place: /dev/stdout, /dev/full), otherwise a new temporary file beside
// the target (a symbolic link's target), which placeOut renames over it
// once it holds a span. The target is checked now, so that a file that
// cannot be written fails the run before it starts.
func (t *Telemetry) openOut(out string) (io.Writer, error) {
	target := out
	if r, err := filepath.EvalSymlinks(out); err == nil {
		target = r
	}
	fi, err := os.Stat(target)
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("--out %s is a directory: give a file name", out)
	case err == nil && !fi.Mode().IsRegular():
		f, err := os.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("--out %s: %w", out, err)
		}
		t.closeOut = f.Close
		return f, nil
	case err == nil:
		// The file is replaced only once the run has spans; check now that
		// it could be.
		f, err := os.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("--out %s: %w", out, err)
		}
		_ = f.Close()
		t.outMode = fi.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("--out %s: %w", out, err)
	}
	f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("--out %s: %w", out, err)
	}
	t.closeOut, t.outTmp, t.outPath = f.Close, f.Name(), target
	return f, nil
}

// placeOut puts the temporary file in --out's place if any span was
// written to it, and removes it otherwise: the demo never deletes or
// empties a file it did not write.
func (t *Telemetry) placeOut() error {
	tmp := t.outTmp
	if tmp == "" {
		return nil
	}
	t.outTmp = ""
	fi, err := os.Stat(tmp)
	if err != nil || fi.Size() == 0 {
		_ = os.Remove(tmp)
		return nil
	}
	mode := t.outMode
	if mode == 0 {
		mode = 0o644
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return fmt.Errorf("--out %s: the spans are in %s: %w", t.outPath, tmp, err)
	}
	if err := os.Rename(tmp, t.outPath); err != nil {
		return fmt.Errorf("--out %s: the spans are in %s: %w", t.outPath, tmp, err)
	}
	return nil
}
