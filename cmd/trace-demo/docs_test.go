package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/informer-anatomy/informer-anatomy/test/doccheck"
)

// The docs that show this program's output. Each sample is marked
// (<!-- output: go run ./cmd/trace-demo ... -->, test/doccheck's Outputs)
// and compared here with a run of the same command.
var docsWithSamples = []string{"README.md", "docs/tracing.md", "docs/scale.md"}

// TestDocsSampleRunsAreTheDemosOutput: every sample of this program's
// output in the docs has the shape of a real run of its command, line by
// line: the same lines in the same order, the same words, only numbers,
// IDs, timings and alignment free to differ (doccheck.Shape, and
// demoShape for what the demo itself says varies). A change to what the
// demo prints fails here until the sample is taken again from a run. The
// runs are the ones the package's other tests share (the default run,
// --verbose, --trace-keys demo/web-1), so this costs no run of its own.
func TestDocsSampleRunsAreTheDemosOutput(t *testing.T) {
	runs := map[string]func(*testing.T) string{
		"go run ./cmd/trace-demo":                  func(t *testing.T) string { return defaultRun(t).r.stdout },
		"go run ./cmd/trace-demo --verbose":        func(t *testing.T) string { return verboseRun(t).r.stdout },
		"go run ./cmd/trace-demo --scenario scale": func(t *testing.T) string { return scenarioRun(t, "scale").r.stdout },
		"go run ./cmd/trace-demo --trace-keys demo/web-1": func(t *testing.T) string {
			return runShared(t, "trace-keys", "--trace-keys", "demo/web-1").r.stdout
		},
	}
	n := 0
	for _, doc := range docsWithSamples {
		outs, err := doccheck.Outputs("../..", doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range outs {
			if !strings.HasPrefix(o.Command, "go run ./cmd/trace-demo") {
				continue
			}
			n++
			run, ok := runs[o.Command]
			if !ok {
				t.Errorf("%s:%d shows the output of %q, which no test runs: add it to this test's runs", o.Doc, o.Line, o.Command)
				continue
			}
			got := run(t)
			if o.Whole {
				got = withoutOptionalLines(got, o.Text)
			}
			shaped := o
			shaped.Text = canonical(o.Text)
			if d := shaped.Drift(canonical(got), func(l string) string { return l }); d != "" {
				t.Errorf("%s:%d is not what %q prints now: %s\nTake the sample again from a run. The run printed:\n%s", o.Doc, o.Line, o.Command, d, got)
			}
		}
	}
	if n < 4 {
		t.Errorf("%d samples of the demo's output are marked in %v; the README's run and tracing.md's lines should be", n, docsWithSamples)
	}
}

// longestWaitRE is the summary's longest wait: which wait of which object
// in which listener was the longest is up to the scheduler.
var longestWaitRE = regexp.MustCompile(`(longest wait in the informer \S+: )\S+, \S+ of \S+( in \S+)?$`)

// refusedRE is a WATCH the reflector retried while the API server was down
// (the relist lesson stops it): whether the reflector tried in that moment
// is up to the scheduler.
var refusedRE = regexp.MustCompile(`( · connection refused → WATCH from [0-9]+)+`)

// demoShape is doccheck.Shape, with the longest wait's stage, object and
// listener taken out too, and a retried WATCH of the relist lesson.
func demoShape(line string) string {
	line = refusedRE.ReplaceAllString(line, "")
	return doccheck.Shape(longestWaitRE.ReplaceAllString(line, "${1}<a wait>"))
}

// canonical is text's lines in demoShape, and in each waterfall (from its
// "━━ [" line to the blank line after it) its span lines without their
// tree's drawing and sorted: distribute hands a change to the listeners in
// map order, as client-go's sharedProcessor does (its listeners are a map
// too), so which listener's branch is drawn first, and so which is drawn
// with └─, differs from run to run; the branches themselves do not.
func canonical(text string) string {
	lines := strings.Split(text, "\n")
	out := make([]string, 0, len(lines))
	for i := 0; i < len(lines); i++ {
		out = append(out, demoShape(lines[i]))
		if !strings.HasPrefix(strings.TrimSpace(lines[i]), "━━ [") {
			continue
		}
		var spans []string
		for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
			i++
			spans = append(spans, demoShape(treeRE.ReplaceAllString(lines[i], " ")))
		}
		slices.Sort(spans)
		out = append(out, spans...)
	}
	return strings.Join(out, "\n")
}

// treeRE is a waterfall's tree drawing.
var treeRE = regexp.MustCompile(`[├└│]─?`)

// optionalLineRE matches the lines a run prints only sometimes: the
// summary's count of deltas still queued at the stop (the resync lesson
// may leave a resync queued; docs/tracing.md says so).
var optionalLineRE = regexp.MustCompile(`(?m)^ *[0-9]+ deltas were still queued when the informer stopped`)

// withoutOptionalLines drops from out the lines a run prints only
// sometimes, unless the sample shows one.
func withoutOptionalLines(out, sample string) string {
	if optionalLineRE.MatchString(sample) {
		return out
	}
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if !optionalLineRE.MatchString(l) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
