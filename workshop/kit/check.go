package kit

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// TimeoutEnv names the runner's setting (cmd/workshop): a Go duration
// (e.g. 1m) that replaces a checker's 30-second limit, for a room of slow
// laptops. The kit's own limits below keep their proportions to it, a
// third for one call and two thirds for initialising, so that raising it
// raises them too (a slow but correct answer is not cut off by a limit
// the participant cannot see), and lowering it, as the runner's own tests
// do, shortens them: each still ends before go test's -timeout, with its
// message in words instead of a goroutine dump.
const TimeoutEnv = "WORKSHOP_TIMEOUT"

// CallTimeout is how long [Returns] waits for an answer's code to return:
// 10 s, or a third of [TimeoutEnv]'s duration when it is set.
var CallTimeout = timeoutShare(10*time.Second, 1, 3)

// InitTimeout is how long a checker's test binary may spend initialising
// its packages (the exercise's package-level variables and init
// functions) before the kit, built with the workshop tag, gives up on it
// (watchdog.go): 20 s, or two thirds of [TimeoutEnv]'s duration when it is
// set.
var InitTimeout = timeoutShare(20*time.Second, 2, 3)

// timeoutShare is num/den of TimeoutEnv's duration when it parses as a
// positive one, else def.
func timeoutShare(def time.Duration, num, den int64) time.Duration {
	d, err := time.ParseDuration(os.Getenv(TimeoutEnv))
	if err != nil || d <= 0 {
		return def
	}
	return d * time.Duration(num) / time.Duration(den)
}

// Returns runs fn, the part of a checker that calls the participant's
// code, and fails t with a message naming what (e.g. "BatchLen") if fn
// does not return within CallTimeout or panics. A checker that calls an
// answer directly would otherwise hang with it (an endless loop, a lock
// never released) until go test's timeout dumps every goroutine.
//
// fn may call t's methods: t.Fatal in fn ends fn, and Returns then ends
// the test. An fn that never returns is left running: the test binary
// ends without it.
func Returns(t testing.TB, what string, fn func()) {
	t.Helper()
	type end struct {
		returned bool
		panicked any
	}
	done := make(chan end, 1)
	go func() {
		var e end
		// Runs on return, on panic and on runtime.Goexit (t.FailNow).
		defer func() {
			if !e.returned {
				e.panicked = recover()
			}
			done <- e
		}()
		fn()
		e.returned = true
	}()
	select {
	case e := <-done:
		switch {
		case e.panicked != nil:
			t.Fatalf("%s panicked: %v", what, e.panicked)
		case !e.returned:
			t.FailNow() // fn called t.FailNow (t.Fatal): its message is out
		}
	case <-time.After(CallTimeout):
		t.Fatalf("%s did not return within %s: an endless loop, or waiting for something that never comes (a channel never closed, a lock never released)?", what, CallTimeout)
	}
}

// DiffList says how your list differs from what happened without saying
// what happened: "" when they are equal, otherwise which of your entries
// is the first that is wrong, or that yours is too short or too long. A
// checker says this instead of printing the real list, which would be the
// answer to copy.
func DiffList[T comparable](yours, real []T) string {
	if len(yours) == 0 && len(real) > 0 {
		return "you wrote no entry"
	}
	for i := range min(len(yours), len(real)) {
		if yours[i] != real[i] {
			return fmt.Sprintf("your entry %d (%s) is the first that is not what happened", i+1, show(yours[i]))
		}
	}
	switch {
	case len(yours) < len(real):
		return fmt.Sprintf("your %d entries are right as far as they go, but there were more", len(yours))
	case len(yours) > len(real):
		return fmt.Sprintf("there were fewer entries than your %d: the first %d are right", len(yours), len(real))
	}
	return ""
}

func show(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}
