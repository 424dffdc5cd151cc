package bubble_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/internal/bubble"
)

// TestIDInsideABubble: 0 outside; inside, the same non-zero id for every
// goroutine of one bubble, and different ids for two bubbles. It fails if
// a Go release changes the header line ID reads.
func TestIDInsideABubble(t *testing.T) {
	require.Zero(t, bubble.ID(), "outside any bubble")
	var first, second, child uint64
	synctest.Test(t, func(t *testing.T) {
		first = bubble.ID()
		done := make(chan struct{})
		go func() { child = bubble.ID(); close(done) }()
		<-done
	})
	synctest.Test(t, func(t *testing.T) { second = bubble.ID() })
	require.NotZero(t, first)
	require.Equal(t, first, child, "a goroutine started in the bubble is in it")
	require.NotZero(t, second)
	require.NotEqual(t, first, second, "two bubbles")
	require.Zero(t, bubble.ID(), "outside again")
}

func BenchmarkID(b *testing.B) {
	for b.Loop() {
		_ = bubble.ID()
	}
}
