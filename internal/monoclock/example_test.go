package monoclock_test

import (
	"fmt"
	"time"

	"github.com/informer-anatomy/informer-anatomy/internal/monoclock"
)

// A handler call timed as chapter 5's listener times it.
func Example() {
	handler := func() { time.Sleep(time.Millisecond) }
	start := monoclock.Now()
	handler()
	took := monoclock.Since(start)
	fmt.Println(took >= time.Millisecond)
	// Output: true
}
