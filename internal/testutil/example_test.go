package testutil_test

import (
	"fmt"
	"strings"

	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// Two informers' logs compared where client-go hands a relist's tombstones
// over in its map's order: each run of tombstones is sorted, nothing else
// moves.
func ExampleSortRuns() {
	tombstone := func(c string) bool { return strings.HasPrefix(c, "delete-tombstone ") }
	fmt.Println(testutil.SortRuns([]string{"add b", "delete-tombstone z", "delete-tombstone a", "add a"}, tombstone))
	// Output: [add b delete-tombstone a delete-tombstone z add a]
}
