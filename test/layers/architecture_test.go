package layers

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestArchitectureListsTheHelpersEdges: ARCHITECTURE.md's floor table
// lists, in its helpers row, every import sameFloor allows between two
// helpers (internal/*) and no other, so the page cannot omit an edge the
// test allows, or keep one the test no longer does. The row's last cell is
// clauses separated by ";": "`a` → `b`, `c` (why)" or "`a` ↔ `b`", each
// name a folder under internal/.
func TestArchitectureListsTheHelpersEdges(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	data, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "| helpers |") {
			row = l
		}
	}
	if row == "" {
		t.Fatal("ARCHITECTURE.md has no floor-table row starting with \"| helpers |\"")
	}
	cells := strings.Split(strings.Trim(row, "| "), " | ")
	documented, err := helperEdges(cells[len(cells)-1])
	if err != nil {
		t.Fatalf("ARCHITECTURE.md's helpers row: %v", err)
	}
	var allowed []string
	for from, tos := range sameFloor {
		if !strings.HasPrefix(from, "internal/") {
			continue
		}
		for _, to := range tos {
			allowed = append(allowed, from+" → "+to)
		}
	}
	slices.Sort(allowed)
	if !slices.Equal(documented, allowed) {
		t.Errorf("ARCHITECTURE.md's helpers row lists\n  %s\nbut sameFloor allows\n  %s",
			strings.Join(documented, "\n  "), strings.Join(allowed, "\n  "))
	}
}

var (
	edgeClauseRE = regexp.MustCompile("^`([a-z]+)` (→|↔) (.+)$")
	edgeTargetRE = regexp.MustCompile("`([a-z]+)`")
	parenRE      = regexp.MustCompile(`\([^)]*\)`)
)

// helperEdges reads the helpers row's edges as sorted "internal/a →
// internal/b" lines; a clause it cannot read is an error.
func helperEdges(cell string) ([]string, error) {
	var edges []string
	for _, clause := range strings.Split(cell, ";") {
		clause = strings.TrimSpace(parenRE.ReplaceAllString(clause, ""))
		m := edgeClauseRE.FindStringSubmatch(clause)
		if m == nil {
			return nil, &clauseError{clause}
		}
		from := "internal/" + m[1]
		for _, t := range edgeTargetRE.FindAllStringSubmatch(m[3], -1) {
			to := "internal/" + t[1]
			edges = append(edges, from+" → "+to)
			if m[2] == "↔" {
				edges = append(edges, to+" → "+from)
			}
		}
	}
	slices.Sort(edges)
	return edges, nil
}

type clauseError struct{ clause string }

func (e *clauseError) Error() string {
	return "cannot read the clause " + `"` + e.clause + `"` + ": want `a` → `b`, `c` or `a` ↔ `b`"
}

func TestHelperEdgesReadsTheRowsClauses(t *testing.T) {
	got, err := helperEdges("`apiserver` ↔ `kube`; `livepage` → `spancheck`, `testutil` (its tests), `tracing`")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"internal/apiserver → internal/kube", "internal/kube → internal/apiserver",
		"internal/livepage → internal/spancheck", "internal/livepage → internal/testutil", "internal/livepage → internal/tracing"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := helperEdges("`a` → `b`; the rest"); err == nil {
		t.Error("a clause that is not an edge is an error")
	}
}
