package bubble_test

import (
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/informer-anatomy/informer-anatomy/internal/bubble"
)

// A goroutine outside any bubble reads 0; inside synctest.Test it reads
// its bubble's id.
func ExampleID() {
	fmt.Println("outside:", bubble.ID())
	var inside uint64
	synctest.Test(&testing.T{}, func(*testing.T) { inside = bubble.ID() })
	fmt.Println("inside is another:", inside != 0)
	// Output:
	// outside: 0
	// inside is another: true
}
