//go:build workshop

package kit

import (
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A package initialiser that never ends (var x = f(), f looping forever)
// runs before any test, so neither the checker nor go test's -timeout,
// which starts with the tests, can stop it: go test would kill the binary
// a minute later with a goroutine dump. The kit is initialised before the
// exercise package that imports it, so it watches: if the main goroutine
// is still in an initialiser after InitTimeout, it says where, in words,
// and ends the binary. Only with the workshop tag, that is in a checker.
func init() {
	if !testing.Testing() {
		return
	}
	go func() {
		time.Sleep(InitTimeout)
		if at := inInit(); at != "" {
			fmt.Printf("kit: initialising the exercise's package did not finish within %s (%s): a package-level variable or init function that never returns?\n", InitTimeout, at)
			os.Exit(1)
		}
	}()
}

var initFrame = regexp.MustCompile(`^\S+\.init(\.\d+|\.func\d+)*\(`)

// inInit returns where the main goroutine is, as "file:line" of its
// innermost frame, when it is running a package initialiser, and ""
// otherwise.
func inInit() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.HasPrefix(g, "goroutine 1 ") {
			continue
		}
		// "goroutine 1 [running]:", then per frame, innermost first,
		// the function and "\tfile:line +0x…".
		lines := strings.Split(g, "\n")
		for _, l := range lines {
			if initFrame.MatchString(l) && len(lines) > 2 {
				at, _, _ := strings.Cut(strings.TrimSpace(lines[2]), " +0x")
				return shortPath(at)
			}
		}
	}
	return ""
}

// shortPath keeps the file name and line of path:line.
func shortPath(s string) string {
	if i := strings.LastIndex(s, "/"); i >= 0 {
		return s[i+1:]
	}
	return s
}
