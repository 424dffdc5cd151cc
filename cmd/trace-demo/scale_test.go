package main

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScaleLesson: --scenario scale measures what each informer holds and
// what a relist costs it, and says so. Its facts, not its timings: the
// per-pod sizes are positive and stripping managedFields makes an informer
// hold less; client-go's relist peaks near twice its steady heap (a second
// copy of every pod until the Replace) with or without the transform,
// ours within chapter 5's bound of 1.3x; and of the relist's OnUpdate
// calls (one per pod), ours hands exactly the unchanged pods over as one
// pointer, client-go none.
func TestScaleLesson(t *testing.T) {
	r := scenarioRun(t, "scale").r
	out := r.stdout
	assert.Empty(t, r.stderr, "no reflector warning: each watch saw an event before it was dropped, so none ended as a very short watch")
	num := func(s string) float64 {
		f, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err)
		return f
	}
	pod := regexp.MustCompile(`scale: one pod in memory: ([0-9.]+) KiB, of which managedFields ([0-9.]+) KiB \(\d+%\); an informer holds ([0-9.]+) KiB per pod .*, ([0-9.]+) KiB stripped`).FindStringSubmatch(out)
	require.NotNil(t, pod, "the per-pod line:\n%s", out)
	assert.Positive(t, num(pod[2]), "managedFields' share of a pod")
	assert.Less(t, num(pod[2]), num(pod[1]))
	assert.GreaterOrEqual(t, num(pod[3]), num(pod[1]), "an informer holds at least the pod itself per pod")
	assert.Less(t, num(pod[4]), num(pod[3]), "stripping managedFields makes the informer hold less")

	runRE := regexp.MustCompile(`(?m)^· scale: (client-go|ours \(realfifo\))(, managedFields stripped)?: steady ([0-9.]+) MiB, relist peak ([0-9.]+) MiB \(([0-9.]+)x\)$`)
	runs := runRE.FindAllStringSubmatch(out, -1)
	require.Len(t, runs, 4, "a line per informer:\n%s", out)
	for _, r := range runs {
		steady, peak := num(r[3]), num(r[4])
		ratio := peak / steady
		if r[1] == "client-go" {
			assert.Greater(t, ratio, 1.6, "client-go%s holds a second copy until its Replace: %s", r[2], r[0])
		} else {
			assert.LessOrEqual(t, ratio, 1.3, "ours%s must hold no second copy of the unchanged pods: %s", r[2], r[0])
		}
	}
	assert.Less(t, num(runs[1][3]), num(runs[0][3]), "client-go's steady heap, stripped vs not")
	assert.Less(t, num(runs[3][3]), num(runs[2][3]), "ours, stripped vs not")

	ptr := regexp.MustCompile(`scale: the relist's (\d+) OnUpdate calls per handler: old and new one pointer in (\d+) of ours \(the unchanged pods\), (\d+) of client-go's`).FindStringSubmatch(out)
	require.NotNil(t, ptr, "the pointer line:\n%s", out)
	assert.Equal(t, []string{"5000", "4750", "0"}, ptr[1:], "5000 pods relisted, 250 of them changed while the watch was down")
}
