package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/informer-anatomy/informer-anatomy/demo/livecontrols"
)

// What participants read besides their exercise's page must not answer
// it: the live view's control texts (GET /api/controls serves them, and
// the page shows them, before any press), and the chapter pages an
// exercise practises. Issue 39 found the burst's and the slow handler's
// texts saying where 08-liveview/1's backlog waits, the drop and relist
// texts saying which requests 08-liveview/2 asks for, the added handler's
// saying 08-liveview/3's root and count, and docs/07 printing
// 07-controller/2's and /3's numbers.
func TestNoControlTextOrDocGivesAnAnswerAway(t *testing.T) {
	texts := map[string]string{}
	for _, c := range livecontrols.Texts() {
		texts["the live view's control "+c.Name] = c.Label + ": " + c.LookFor
	}
	exs, err := load("../..")
	if err != nil {
		t.Fatal(err)
	}
	// Every answer written out (a string that is more than a word: a
	// request, a listener, a key), unless the exercise's own page gives
	// it: no control text may hold one.
	for _, e := range exs {
		if e.Kind == "build" {
			continue
		}
		lits, err := answerStrings("../../"+e.SolutionPath(), e)
		if err != nil {
			t.Fatal(err)
		}
		task := taskOf("../..", e)
		for _, s := range lits {
			if !notJustLetters(s) || strings.Contains(task, s) {
				continue
			}
			for where, text := range texts {
				if strings.Contains(text, s) {
					t.Errorf("%s gives %s's answer away: %q", where, e.Name(), s)
				}
			}
		}
	}
	// The answers in words: what each text once said, and anything that
	// says the same.
	doc, err := os.ReadFile("../../docs/07-your-controller.md")
	if err != nil {
		t.Fatal(err)
	}
	texts["docs/07-your-controller.md"] = strings.Join(strings.Fields(string(doc)), " ")
	number := `(\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven)`
	for _, c := range []struct {
		exercise string
		says     *regexp.Regexp
	}{
		{"08-liveview/1-backlog", regexp.MustCompile(`(?i)pending[^.;:]*(holds|grows|fills|drains)|(holds|grows|fills)[^.;:]*pending|N more calls`)},
		{"08-liveview/2-rewatch-or-relist", regexp.MustCompile(`(?i)WATCH(es)? again from|without a new stream|new STREAM, not a LIST|streams the whole state again|fetches the whole state again`)},
		{"08-liveview/3-late-root", regexp.MustCompile(`(?i)root AddEventHandler|one call per cached object|HandleDeltas (is|are) not involved`)},
		{"07-controller/2-burst", regexp.MustCompile(`(?i)` + number + ` adds? merged|` + number + ` merged|` + number + ` reconciles`)},
		{"07-controller/3-coalesced-trace", regexp.MustCompile(`(?i)` + number + ` links`)},
	} {
		for where, text := range texts {
			if m := c.says.FindString(text); m != "" {
				t.Errorf("%s gives %s's answer away: %q", where, c.exercise, m)
			}
		}
	}
}
