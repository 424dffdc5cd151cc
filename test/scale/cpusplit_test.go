package scale

import (
	"bytes"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

//go:noinline
func spinSourceLike(d time.Duration) (x uint64) {
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := range 10_000 {
			x += uint64(i) * 2654435761
		}
	}
	return x
}

//go:noinline
func spinInformerLike(d time.Duration) (x uint64) {
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := range 10_000 {
			x ^= uint64(i) * 40503
		}
	}
	return x
}

// Two goroutines spin for the same wall time, one in a function counted as
// the source's: the profile's samples are split between them, each sample
// once, and a function named as neither source nor GC counts as the
// informer's own.
func TestCountSharesSplitsAProfileByFunction(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, pprof.StartCPUProfile(&buf))
	var wg sync.WaitGroup
	var sink [2]uint64 // the spins' results, kept so that their work is not optimised away
	wg.Go(func() { sink[0] = spinSourceLike(400 * time.Millisecond) })
	wg.Go(func() { sink[1] = spinInformerLike(400 * time.Millisecond) })
	wg.Wait()
	pprof.StopCPUProfile()
	t.Logf("spun: %x", sink)

	shares, err := countShares(buf.Bytes(), []string{"scale.spinSourceLike"}, []string{"runtime.gcBgMarkWorker"})
	require.NoError(t, err)
	require.Positive(t, shares.Source, "%+v", shares)
	require.Positive(t, shares.Own, "%+v", shares)
	// Nothing counted twice: as source, the same profile's samples move
	// from Own to Source and the total stays.
	swapped, err := countShares(buf.Bytes(), []string{"scale.spinSourceLike", "scale.spinInformerLike"}, []string{"runtime.gcBgMarkWorker"})
	require.NoError(t, err)
	require.Equal(t, shares.total(), swapped.total())
	require.Equal(t, shares.Source+shares.Own, swapped.Source+swapped.Own, "%+v then %+v", shares, swapped)
	require.Less(t, swapped.Own, shares.Own)
}

// Not a profile: an error saying so, not a zero split.
func TestCountSharesRefusesWhatIsNotAProfile(t *testing.T) {
	_, err := countShares([]byte("not gzip"), sourceFrames, gcFrames)
	require.ErrorContains(t, err, "the CPU profile")
}
