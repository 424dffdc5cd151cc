package demoproc_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/demo/demoproc"
	"github.com/informer-anatomy/informer-anatomy/demo/demoproc/demoproctest"
	"github.com/informer-anatomy/informer-anatomy/demo/liveview"
)

// The live view as a user starts it: the URL printed carries the port the
// kernel chose and serves the page's API; Ctrl-C ends the demo with exit
// code 0, and stopping again gives the same answer.
func TestStartServesTheLiveViewAndStopStopsIt(t *testing.T) {
	p := demoproctest.Start(t, time.Minute, demoproctest.Build(t), "--duration", "30s")
	require.Regexp(t, `^http://127\.0\.0\.1:[1-9]\d*/$`, p.URL)

	res, err := http.Get(p.URL + "api/state")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var st liveview.State
	require.NoError(t, json.NewDecoder(res.Body).Decode(&st))

	code, err := p.Stop()
	require.NoError(t, err, "output:\n%s", p.Output())
	assert.Equal(t, 0, code, "output:\n%s", p.Output())
	assert.Contains(t, p.Output(), "live view: "+p.URL)
	again, err := p.Stop()
	assert.NoError(t, err)
	assert.Equal(t, code, again)
}

// A demo that exits before printing its URL (here: a flag it does not
// know) is an error at once, with what the demo said, instead of a wait
// for a URL that never comes.
func TestStartReportsADemoThatEndsFirst(t *testing.T) {
	bin := demoproctest.Build(t)
	p, err := demoproc.Start(10*time.Minute, bin, "--no-such-flag")
	require.Error(t, err)
	assert.Nil(t, p)
	msg := err.Error()
	assert.Contains(t, msg, "trace-demo --ui --ui-addr 127.0.0.1:0 --no-such-flag ended before printing its live view URL (exit status")
	assert.Contains(t, msg, "flag provided but not defined: -no-such-flag", "the demo's own message")
}

// A process that runs on without printing a URL is an error after the
// timeout, with its output, and is killed.
func TestStartReportsNoURLInTime(t *testing.T) {
	script := standIn(t, "starting up", "sleep")
	// 3 s, not less: the stand-in is this test binary, started again; under
	// -race on a loaded machine it took more than 100 ms to print its first
	// line, and the message then had no output to quote.
	_, err := demoproc.Start(3*time.Second, script)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "printed no live view URL within 3s:\nstarting up")
}

// A demo that had ended by itself before Stop: Stop says so and still
// gives its exit code.
func TestStopReportsADemoThatHadEnded(t *testing.T) {
	script := standIn(t, "live view: http://127.0.0.1:1/ (Ctrl-C stops)", "3")
	p, err := demoproc.Start(time.Minute, script)
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:1/", p.URL)
	<-p.Done() // Start may return between the echo and the exit
	code, err := p.Stop()
	assert.ErrorIs(t, err, demoproc.ErrEnded)
	assert.ErrorContains(t, err, "exit status 3")
	assert.Equal(t, 3, code)
}

// LockedBuffer keeps every write whole while it is read concurrently (the
// race detector checks the locking).
func TestLockedBuffer(t *testing.T) {
	var b demoproc.LockedBuffer
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for range 100 {
				fmt.Fprintf(&b, "%d", w)
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			_ = b.String()
		}
	})
	wg.Wait()
	counts := map[rune]int{}
	for _, r := range b.String() {
		counts[r]++
	}
	assert.Equal(t, map[rune]int{'0': 100, '1': 100, '2': 100, '3': 100}, counts)
}

// standInEnv makes this test binary the stand-in for trace-demo; see
// TestMain.
const standInEnv = "DEMOPROC_STAND_IN"

// TestMain doubles as a stand-in for trace-demo, so that the tests of an
// odd demo need neither a shell nor a special build: with standInEnv set
// to "line\nend", the binary prints line, then exits with the code end
// names, or with end "sleep" runs until it is killed.
func TestMain(m *testing.M) {
	if spec, ok := os.LookupEnv(standInEnv); ok {
		line, end, _ := strings.Cut(spec, "\n")
		fmt.Println(line)
		if end == "sleep" {
			time.Sleep(time.Hour)
		}
		code, _ := strconv.Atoi(end)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// standIn returns the path of a trace-demo stand-in that prints line and
// then ends as end says (an exit code, or "sleep"); it ignores its
// arguments. The child inherits the environment set here.
func standIn(t *testing.T, line, end string) string {
	t.Helper()
	t.Setenv(standInEnv, line+"\n"+end)
	exe, err := os.Executable()
	require.NoError(t, err)
	return exe
}

// BuildAt builds where Build looks, so that a program that builds the
// demo once before starting many test processes (the workshop's
// selfcheck) saves each of them the link.
func TestBuildAtBuildsWhereBuildLooks(t *testing.T) {
	bin, err := demoproc.Build()
	require.NoError(t, err)
	dir, err := os.Getwd() // <root>/demo/demoproc
	require.NoError(t, err)
	at, err := demoproc.BuildAt(filepath.Dir(filepath.Dir(dir)))
	require.NoError(t, err)
	assert.Equal(t, bin, at)
}
