//go:build unix

package processor

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) this process has used so
// far. The benchmarks report it per iteration beside the wall clock: on a
// machine shared with other work, waiting for a core stretches the wall
// clock of one variant and not the other's, but not the CPU time the
// variant itself needed.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
