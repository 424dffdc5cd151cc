package tracing

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// MaxValueBytes bounds every value taken from a watched object (its key,
// namespace, resource version, an annotation) that this project puts on a
// span, a span event, a metric, a log line or the live view's page. The
// longest legitimate one is an object key: a namespace (a DNS label, 63
// bytes) "/" a name (a DNS subdomain, 253 bytes), 317 bytes; 512 leaves
// room for a name no API server would accept but a fake clientset or an
// aggregated server might serve.
const MaxValueBytes = 512

// MaxMessageBytes bounds an error's message on a span (its status and
// its exception event): an error can quote what it failed on (a handler's
// or an index function's error, the API server's Status message), so it
// is made safe as an object's values are, with more room.
const MaxMessageBytes = 4096

// cutMark ends a value that [Cut] shortened, so that a reader can tell a
// cut value from a whole one.
const cutMark = "…"

// Value is [Cut](s, [MaxValueBytes]): what every value taken from an object
// goes through before it reaches telemetry.
//
// Ours.
func Value(s string) string { return Cut(s, MaxValueBytes) }

// Cut returns s as a telemetry value of at most limit bytes (limit at least
// 4, room for one character and the mark):
//
//   - valid UTF-8: each byte that does not begin a valid character is
//     replaced by U+FFFD. An OTLP exporter marshals attributes as protobuf
//     strings, which must be valid UTF-8: one invalid byte in one
//     attribute fails the marshalling of the whole batch the span is in,
//     and every span of that batch, of every object, is lost.
//   - without control characters (C0, DEL, C1; unicode.IsControl), each
//     replaced by U+FFFD: a value can reach a log line or a terminal,
//     where an escape sequence or a carriage return would rewrite what the
//     reader sees.
//   - cut on a character boundary, never inside one, and then marked with
//     "…" (the mark counts in limit): a cut at a byte count can split a
//     multi-byte character and leave an invalid byte, the first bullet's
//     failure.
//   - in memory of its own: the result shares no bytes with s. A Go
//     substring shares its string's memory, so a 64-byte piece of a 256 KiB
//     annotation kept on a span keeps all 256 KiB alive for as long as the
//     span is held (the live view keeps 2,000 traces: one object updated
//     2,000 times with such a value pinned half a gigabyte).
//
// It reads at most about limit bytes of s (never the whole of a long value),
// and allocates once. Anyone who can write a watched object chooses its
// annotations, labels and (on a fake or aggregated server) its name: none
// of them may stop or swell the process's telemetry.
//
// Ours.
func Cut(s string, limit int) string {
	limit = max(limit, 4)
	if len(s) <= limit && plain(s) {
		return strings.Clone(s)
	}
	var b strings.Builder
	b.Grow(min(len(s)+2*utf8.UTFMax, limit))
	// room is what the characters may take; cutMark's bytes are kept free
	// until it is known that all of s fits.
	room := limit - len(cutMark)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unicode.IsControl(r) {
			r = utf8.RuneError
		}
		n := utf8.RuneLen(r)
		if b.Len()+n > room && !fitsWhole(b.Len(), n, s[i+size:], limit) {
			b.WriteString(cutMark)
			return b.String()
		}
		b.WriteRune(r)
		i += size
	}
	return b.String()
}

// fitsWhole: the character of n bytes, after written bytes, and the rest
// of s after it fit in limit with no mark (a short value that needed only
// replacements). Called only once the mark's room is reached: rest is then
// at most len(cutMark) bytes for it to be true, checked by length first.
func fitsWhole(written, n int, rest string, limit int) bool {
	if written+n+len(rest) > limit {
		return false
	}
	// A replaced byte takes 3.
	total := written + n
	for j := 0; j < len(rest); {
		r, size := utf8.DecodeRuneInString(rest[j:])
		if r == utf8.RuneError && size == 1 || unicode.IsControl(r) {
			r = utf8.RuneError
		}
		total += utf8.RuneLen(r)
		j += size
	}
	return total <= limit
}

// plain: s is valid UTF-8 with no control character, so that a copy of it
// is the value as is. ASCII is checked byte by byte, the rest rune by rune.
func plain(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unicode.IsControl(r) {
			return false
		}
		i += size
	}
	return true
}

// SetError marks span as failed with err: its status (codes.Error) and,
// with record, the "exception" event that span.RecordError would add
// (exception.type as the SDK spells it, exception.message), both with the
// message through [Cut] at [MaxMessageBytes]. span.RecordError and
// span.SetStatus(codes.Error, err.Error()) would put err's message on the
// span as is: one invalid byte in it fails the OTLP export of the span's
// whole batch. Nothing when err is nil or the span does not record.
//
// Ours.
func SetError(span trace.Span, err error, record bool) {
	if err == nil || !span.IsRecording() {
		return
	}
	msg := Cut(err.Error(), MaxMessageBytes)
	if record {
		span.AddEvent(semconv.ExceptionEventName, trace.WithAttributes(
			semconv.ExceptionType(errorType(err)), semconv.ExceptionMessage(msg)))
	}
	span.SetStatus(codes.Error, msg)
}

// errorType is err's type as the SDK's RecordError names it: package
// path and type name, or the type's own spelling when it has no name
// (a pointer, as *errors.errorString).
func errorType(err error) string {
	t := reflect.TypeOf(err)
	if t.PkgPath() == "" && t.Name() == "" {
		return t.String()
	}
	return fmt.Sprintf("%s.%s", t.PkgPath(), t.Name())
}
