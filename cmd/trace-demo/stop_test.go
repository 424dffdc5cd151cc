package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/demo"
	"github.com/informer-anatomy/informer-anatomy/demo/demoproc"
	"github.com/informer-anatomy/informer-anatomy/demo/demoproc/demoproctest"
	"github.com/informer-anatomy/informer-anatomy/demo/livecontrols"
	"github.com/informer-anatomy/informer-anatomy/demo/liveview"
)

// stopBound is how soon after Ctrl-C the demo must have ended: a bound to
// fail by, not a measurement. The demo's own part is about a second (the
// summary's analysis beside the final flush, which Ctrl-C cuts to
// interruptedFlushTimeout); what this must catch is a stop that waits out
// the full flushTimeout (10s) or hangs. 2s failed on a loaded 2-core CI
// machine (2.8-3.7s) with nothing wrong, so the bound sits between the two.
const stopBound = 6 * time.Second

// interruptWithin sends d Ctrl-C and fails unless it ended within
// stopBound; it returns the exit code.
func interruptWithin(t *testing.T, d *demoproc.Proc) int {
	t.Helper()
	start := time.Now()
	code, err := d.Stop()
	took := time.Since(start)
	require.NoError(t, err, d.Output())
	assert.Less(t, took, stopBound, "Ctrl-C ends the demo within %v; it took %v; output:\n%s", stopBound, took, d.Output())
	return code
}

func procState(t *testing.T, d *demoproc.Proc) liveview.State {
	t.Helper()
	st, err := getJSON[liveview.State](d.URL + "api/state")
	require.NoError(t, err)
	return st
}

func procPress(t *testing.T, d *demoproc.Proc, control string) {
	t.Helper()
	res, err := http.Post(d.URL+"api/control/"+control, "", nil)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, control)
}

// Ctrl-C during a burst of 100,000 ends the demo within moments: the burst
// stops between two updates. Before, the run waited for the burst's last
// write (13-14 s), and a second Ctrl-C was swallowed too.
func TestCtrlCDuringABurstEndsTheDemo(t *testing.T) {
	d := demoproctest.Start(t, time.Minute, demoproctest.Build(t), "--duration", "10m")
	var before liveview.State
	require.Eventually(t, func() bool {
		before = procState(t, d)
		return before.Pipeline.HandleDeltas == 1 && settled(before.Pipeline, 3)
	}, time.Minute, 10*time.Millisecond)
	go func() {
		// Its answer does not matter: the demo stops under it.
		if res, err := http.Post(d.URL+fmt.Sprintf("api/control/burst?n=%d", livecontrols.MaxBurst), "", nil); err == nil {
			res.Body.Close()
		}
	}()
	require.Eventually(t, func() bool {
		return procState(t, d).Pipeline.HandleDeltas > before.Pipeline.HandleDeltas+100
	}, time.Minute, 10*time.Millisecond, "the burst under way")
	interruptWithin(t, d)
	assert.NotContains(t, d.Output(), fmt.Sprintf("%d updates of demo/web-1 written", livecontrols.MaxBurst))
}

// Ctrl-C while the lesson script runs ends the demo within moments: every
// wait of a lesson ends with the run. Here the script's first lesson waits
// for a slow handler to drain a burst (30 s at 10 ms per call). Before,
// the run waited for the lesson (up to its step timeout, 20 s) and then
// for the rest of the script.
func TestCtrlCDuringTheLessonScriptEndsTheDemo(t *testing.T) {
	d := demoproctest.Start(t, time.Minute, demoproctest.Build(t), "--duration", "10m")
	require.Eventually(t, func() bool {
		st := procState(t, d)
		return st.Pipeline.HandleDeltas == 1 && settled(st.Pipeline, 3)
	}, time.Minute, 10*time.Millisecond)
	procPress(t, d, "slow")
	procPress(t, d, "burst?n=3000")
	procPress(t, d, "lessons")
	require.Eventually(t, func() bool { return strings.Contains(d.Output(), "▶ basic") }, time.Minute, 5*time.Millisecond,
		"the script at its first lesson; output:\n%s", d.Output())
	code := interruptWithin(t, d)
	assert.Equal(t, 0, code, d.Output())
	assert.Contains(t, d.Output(), "lesson script stopped during basic")
	assert.NotContains(t, d.Output(), "lesson script done")
}

// Ctrl-C in the middle of the scripted run (no --ui) ends it within
// moments too, saying where it was.
func TestCtrlCDuringTheScriptedRunEndsIt(t *testing.T) {
	bin := demoproctest.Build(t)
	var out demoproc.LockedBuffer
	cmd := exec.Command(bin)
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "▶ order") }, time.Minute, 5*time.Millisecond, "output:\n%s", &out)
	start := time.Now()
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("the scripted run did not end within a minute of Ctrl-C; output:\n%s", &out)
	}
	took := time.Since(start)
	assert.Less(t, took, stopBound, "Ctrl-C ends the run within %v; it took %v; output:\n%s", stopBound, took, &out)
	assert.Contains(t, out.String(), "trace-demo: interrupted during ")
}

// The lesson script runs again in the same process, every lesson on its
// own objects again, each with its result line. Before, the second run
// failed at once: pods "web-coalesced" already exists; later, under load,
// it gave up on a relist that the reflector's backoff had only delayed.
func TestLessonScriptRunsTwice(t *testing.T) {
	d := startLiveDemo(t)
	d.waitState(t, "synced", func(st liveview.State) bool { return st.Pipeline.HandleDeltas == 1 && settled(st.Pipeline, 3) })
	for run := 1; run <= 2; run++ {
		code, r := d.press(t, "lessons")
		require.Equal(t, http.StatusOK, code, r.Message)
		// The script ends with "done", or a warning naming the lesson that
		// failed. The second run's relist and fallback wait out the
		// reflector's grown backoff (demo/lessons, untilRelisted),
		// which can take a minute or more.
		require.Eventually(t, func() bool {
			return strings.Count(d.stdout.String(), "lesson script done") == run || strings.Contains(d.stderr.String(), "lesson script:")
		}, 4*time.Minute, 20*time.Millisecond, "run %d of the script; stdout:\n%s\nstderr:\n%s", run, d.stdout, d.stderr)
		require.NotContains(t, d.stderr.String(), "lesson script:", "run %d of the script; stdout:\n%s", run, d.stdout)
	}
	// The second late handler replaced the first: four listeners, not five.
	assert.Len(t, d.state(t).Pipeline.Listeners, 4)
	res := d.stop()
	assert.Equal(t, 0, res.code, res.stderr)
	assert.NotContains(t, res.stderr, "lesson ", "no lesson failed")
	for _, line := range []string{"· coalesce", "· order:", "· slow-handler: *demo.tunableHandler took", "· relist: demo/doomed reached OnDelete as a DeletedFinalStateUnknown",
		"· late-handler: *demo.lateHandler#", "· resync: *demo.lateHandler#"} {
		assert.Equal(t, 2, strings.Count(res.stdout, line), "%q once per run; stdout:\n%s", line, res.stdout)
	}
}

// With the tunable handler slow, the page refuses a burst it could not
// show draining within a minute, and a burst that would pile up past that
// on what is still waiting; it says why, and what to do. Before, every
// burst was taken, and repeated bursts grew the demo past 600 MB.
func TestSlowHandlerBurstsAreCapped(t *testing.T) {
	d := startLiveDemo(t)
	d.waitState(t, "synced", func(st liveview.State) bool { return st.Pipeline.HandleDeltas == 1 && settled(st.Pipeline, 3) })
	code, r := d.press(t, "slow")
	require.Equal(t, http.StatusOK, code, r.Message)
	limit := int(livecontrols.MaxDrain / livecontrols.SlowDelay)

	code, r = d.pressN(t, "burst", limit+1)
	assert.Equal(t, http.StatusBadRequest, code, r.Message)
	assert.Contains(t, r.Message, fmt.Sprintf("refused: a burst of %d is more than %d, what %s, at 10ms per call, handles in 1m0s: make the handler fast", limit+1, limit, demo.TunableListener))

	code, r = d.pressN(t, "burst", limit/2)
	require.Equal(t, http.StatusOK, code, r.Message)
	code, r = d.pressN(t, "burst", limit/2+limit/4)
	assert.Equal(t, http.StatusServiceUnavailable, code, r.Message)
	assert.Contains(t, r.Message, "refused for now:")
	assert.Contains(t, r.Message, "changes still wait for the informer's slowest listener")
	assert.Contains(t, r.LookFor, "If the informer falls 4096 events behind the API server, the embedded server ends its watch")

	// Fast again: the backlog drains, and a large burst is taken.
	code, r = d.press(t, "fast")
	require.Equal(t, http.StatusOK, code, r.Message)
	d.waitState(t, "the backlog drained", func(st liveview.State) bool { return settled(st.Pipeline, 3) })
	code, r = d.pressN(t, "burst", limit+1)
	assert.Equal(t, http.StatusOK, code, r.Message)
}

func (d *liveDemo) pressN(t *testing.T, control string, n int) (int, liveview.ControlResult) {
	t.Helper()
	return d.press(t, fmt.Sprintf("%s?n=%d", control, n))
}
