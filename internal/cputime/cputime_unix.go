//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process is the CPU time (user and system, all threads) this process has
// used so far, from getrusage(RUSAGE_SELF); 0 if that call fails.
func Process() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
