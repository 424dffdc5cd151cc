package tracing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// TestContractPageNamesEveryConstant: every span name, event name and
// attribute key defined here appears, in backticks, on docs/span-contract.md,
// so the page cannot fall behind the code that emits the names.
func TestContractPageNamesEveryConstant(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "span-contract.md"))
	if err != nil {
		t.Fatal(err)
	}
	var checked int
	for name, value := range testutil.StringConsts(t, ".") {
		if !strings.HasPrefix(name, "Span") && !strings.HasPrefix(name, "Key") && !strings.HasPrefix(name, "Event") {
			continue
		}
		value = strings.TrimSpace(value) // SpanRootPrefix is "ListAndWatch "
		checked++
		if !strings.Contains(string(page), "`"+value) {
			t.Errorf("%s = %q is not on docs/span-contract.md", name, value)
		}
	}
	if checked < 30 {
		t.Fatalf("found only %d names in internal/tracing: has the file's layout changed?", checked)
	}
}
