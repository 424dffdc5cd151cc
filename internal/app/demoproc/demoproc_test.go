package demoproc_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/internal/app/demoproc"
	"github.com/informer-anatomy/informer-anatomy/internal/app/liveview"
)

// The live view as a user starts it: the URL printed carries the port the
// kernel chose and serves the page's API; Ctrl-C ends the demo with exit
// code 0, and stopping again gives the same answer.
func TestStartServesTheLiveViewAndStopStopsIt(t *testing.T) {
	p := demoproc.Start(t, time.Minute, demoproc.Build(t), "--duration", "30s")
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
// know) fails the test at once, with what the demo said, instead of
// waiting for a URL that never comes.
func TestStartReportsADemoThatEndsFirst(t *testing.T) {
	bin := demoproc.Build(t)
	msg := runFailing(t, func(tb testing.TB) { demoproc.Start(tb, 10*time.Minute, bin, "--no-such-flag") })
	assert.Contains(t, msg, "trace-demo --ui --ui-addr 127.0.0.1:0 --no-such-flag ended before printing its live view URL (exit status")
	assert.Contains(t, msg, "flag provided but not defined: -no-such-flag", "the demo's own message")
}

// A process that runs on without printing a URL fails the test after the
// timeout, with its output, and is killed.
func TestStartReportsNoURLInTime(t *testing.T) {
	script := standIn(t, "starting up", "sleep")
	// 3 s, not less: the stand-in is this test binary, started again; under
	// -race on a loaded machine it took more than 100 ms to print its first
	// line, and the message then had no output to quote.
	msg := runFailing(t, func(tb testing.TB) { demoproc.Start(tb, 3*time.Second, script) })
	assert.Contains(t, msg, "printed no live view URL within 3s:\nstarting up")
}

// A demo that had ended by itself before Stop: Stop says so and still
// gives its exit code.
func TestStopReportsADemoThatHadEnded(t *testing.T) {
	script := standIn(t, "live view: http://127.0.0.1:1/ (Ctrl-C stops)", "3")
	p := demoproc.Start(t, time.Minute, script)
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

// runFailing runs f with a testing.TB that records the first Fatal instead
// of failing t, runs f's cleanups, and returns the message; f must fail.
func runFailing(t *testing.T, f func(testing.TB)) string {
	t.Helper()
	ft := &fatalT{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(ft)
	}()
	<-done
	for i := len(ft.cleanups) - 1; i >= 0; i-- {
		ft.cleanups[i]()
	}
	require.True(t, ft.failed, "the call did not fail")
	return ft.msg
}

// fatalT is the part of testing.TB that demoproc uses; the embedded nil
// TB makes any other call panic, so a new use shows up here.
type fatalT struct {
	testing.TB
	failed   bool
	msg      string
	cleanups []func()
}

func (f *fatalT) Helper()           {}
func (f *fatalT) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fatalT) Fatal(args ...any) { f.fail(fmt.Sprint(args...)) }
func (f *fatalT) Fatalf(format string, args ...any) {
	f.fail(fmt.Sprintf(format, args...))
}

func (f *fatalT) fail(msg string) {
	f.failed, f.msg = true, msg
	runtime.Goexit()
}

// BuildAt builds where Build looks, so that a program that builds the
// demo once before starting many test processes (the workshop's
// selfcheck) saves each of them the link.
func TestBuildAtBuildsWhereBuildLooks(t *testing.T) {
	bin := demoproc.Build(t)
	dir, err := os.Getwd() // <root>/internal/app/demoproc
	require.NoError(t, err)
	at, err := demoproc.BuildAt(filepath.Dir(filepath.Dir(filepath.Dir(dir))))
	require.NoError(t, err)
	assert.Equal(t, bin, at)
}
