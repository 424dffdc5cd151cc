package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// outputRE matches `<!-- output: <command> -->` (the block is the whole
// output) and `<!-- output-lines: <command> -->` (the block is some of its
// lines, in order).
var outputRE = regexp.MustCompile(`^<!-- output(-lines)?: (.+?) -->$`)

// Output is a sample of a program's output that a doc shows: a marker line
// right before a fenced block,
//
//	<!-- output: go run ./cmd/trace-demo -->
//	```
//	...
//	```
//
// The program's own tests run the command and compare ([Output.Drift]), so
// a sample cannot drift from what the program prints: the doc says what a
// run looks like, and a test fails when a run no longer looks like it.
type Output struct {
	Doc     string
	Line    int    // the marker's line in Doc, 1-based
	Command string // the command that printed it
	// Whole: the block is the whole output (output:); otherwise
	// (output-lines:) its lines appear in the output in this order, with
	// other lines between them.
	Whole bool
	Text  string // the block, the indentation of its fence removed
}

// Outputs reads one markdown file under root and returns every output
// sample in it. A marker not followed by a fenced block is an error.
func Outputs(root, doc string) ([]Output, error) {
	data, err := os.ReadFile(filepath.Join(root, doc))
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	var outs []Output
	for i := 0; i < len(lines); i++ {
		m := outputRE.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		o := Output{Doc: doc, Line: i + 1, Command: m[2], Whole: m[1] == ""}
		if i+1 >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "```") {
			return nil, fmt.Errorf("%s:%d: output marker must be followed by a ``` block", doc, i+1)
		}
		// A block inside a list item is indented; its lines carry the
		// fence's indentation, which is the doc's, not the program's.
		indent := lines[i+1][:len(lines[i+1])-len(strings.TrimLeft(lines[i+1], " "))]
		end := i + 2
		for end < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[end]), "```") {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("%s:%d: code block is not closed", doc, i+1)
		}
		block := make([]string, 0, end-i-2)
		for _, l := range lines[i+2 : end] {
			block = append(block, strings.TrimPrefix(l, indent))
		}
		o.Text = strings.Join(block, "\n")
		outs = append(outs, o)
		i = end
	}
	return outs, nil
}

var (
	// hexIDRE: trace IDs (32 hex digits) and span IDs (16).
	hexIDRE = regexp.MustCompile(`\b(?:[0-9a-f]{32}|[0-9a-f]{16})\b`)
	// barRE: a waterfall's bar, the cells between its frame, and the
	// header's frame with its 0.
	barRE = regexp.MustCompile(`\|(?:0 *|[ ▏█]*)\|`)
	// numberRE: a number, signed, with its decimals.
	numberRE = regexp.MustCompile(`[+-]?[0-9]+(?:\.[0-9]+)?`)
	// pluralRE: the word or two after a number, whose plural s follows
	// the number ("1 pod", "2 pods"; "1 resync call", "2 resync calls").
	pluralRE = regexp.MustCompile(`\b0 (\w+?)s\b|\b0 (\w+) (\w+?)s\b`)
	spaceRE  = regexp.MustCompile(`\s+`)
)

// Shape is line with what differs from one run to the next taken out:
// trace and span IDs, the cells of a waterfall's bar, every number (times,
// counts, resourceVersions, ports) and with it a plural's s, and the width
// of the spaces that align columns. Two runs of a program print lines of
// the same shape; a changed word, a new or lost line does not.
func Shape(line string) string {
	s := hexIDRE.ReplaceAllString(line, "<id>")
	s = barRE.ReplaceAllString(s, "|bar|")
	s = numberRE.ReplaceAllString(s, "0")
	s = pluralRE.ReplaceAllStringFunc(s, func(m string) string {
		return strings.TrimSuffix(m, "s")
	})
	return strings.TrimSpace(spaceRE.ReplaceAllString(s, " "))
}

// Drift compares the sample with got, a run's output, line by line after
// shape (Shape, or one that also takes out what the program knows to vary):
// "" when the sample has the run's shape, else what differs, for a test's
// message. Blank lines count only in a whole sample.
func (o Output) Drift(got string, shape func(string) string) string {
	want := shapes(o.Text, shape, o.Whole)
	have := shapes(got, shape, o.Whole)
	if o.Whole {
		for i := 0; i < len(want) || i < len(have); i++ {
			switch {
			case i >= len(want):
				return fmt.Sprintf("the run printed more, from line %d: %q", i+1, have[i])
			case i >= len(have):
				return fmt.Sprintf("the run ended before the sample's line %d: %q", i+1, want[i])
			case want[i] != have[i]:
				return fmt.Sprintf("line %d:\n  sample: %q\n  run:    %q", i+1, want[i], have[i])
			}
		}
		return ""
	}
	j := 0
	for i, w := range want {
		for j < len(have) && have[j] != w {
			j++
		}
		if j == len(have) {
			return fmt.Sprintf("the sample's line %d is not in the run (after its line %d's match): %q", i+1, i, w)
		}
		j++
	}
	return ""
}

func shapes(text string, shape func(string) string, blanks bool) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if s := shape(l); s != "" || blanks {
			out = append(out, s)
		}
	}
	return out
}
