package kit

import (
	"fmt"
	"testing"
	"time"
)

// CallTimeout is how long [Returns] waits for an answer's code to return.
var CallTimeout = 10 * time.Second

// InitTimeout is how long a checker's test binary may spend initialising
// its packages (the exercise's package-level variables and init
// functions) before the kit, built with the workshop tag, gives up on it
// (watchdog.go).
const InitTimeout = 20 * time.Second

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
