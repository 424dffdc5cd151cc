package chunkq_test

import (
	"fmt"

	"github.com/informer-anatomy/informer-anatomy/internal/chunkq"
)

// A queue of small chunks: five entries take two chunks of four; popping
// the first four lets the first chunk go (kept as the one spare), and the
// next push past the last chunk reuses it instead of allocating.
func ExampleQueue() {
	q := chunkq.Queue[string]{ChunkSize: 4}
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		q.Push(s)
	}
	inUse, spare := q.Chunks()
	fmt.Println(q.Len(), "queued in", inUse, "chunks,", spare, "spare")
	fmt.Println(q.PopFront(4, nil))
	inUse, spare = q.Chunks()
	fmt.Println(q.Len(), "queued in", inUse, "chunk,", spare, "spare")
	v, _ := q.Pop()
	fmt.Println(v)
	// Output:
	// 5 queued in 2 chunks, 0 spare
	// [a b c d]
	// 1 queued in 1 chunk, 1 spare
	// e
}
