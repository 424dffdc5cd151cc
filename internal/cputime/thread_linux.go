//go:build linux

package cputime

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ThreadID is the kernel's id of the OS thread running the caller. It names
// that thread for [Thread] only while the caller holds it with
// runtime.LockOSThread: otherwise the goroutine may move to another thread
// at any moment.
func ThreadID() int { return syscall.Gettid() }

// Thread is the CPU time the thread tid of this process has used so far,
// read from /proc/self/task/<tid>/schedstat (its first field: nanoseconds
// on a CPU); false if the thread has ended or the kernel does not keep the
// figure.
//
// A benchmark uses it to take apart a process's CPU time: a goroutine that
// locks its thread for its whole life is the only one that thread runs, so
// the thread's CPU time is that goroutine's (the GC work it does as an
// assist included).
func Thread(tid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/schedstat", tid))
	if err != nil {
		return 0, false
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	ns, err := strconv.ParseInt(first, 10, 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(ns), true
}
