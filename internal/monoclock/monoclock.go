package monoclock

import (
	"time"
	_ "unsafe" // go:linkname
)

// nanotime is the runtime's monotonic clock in nanoseconds: what
// time.Since reads. The runtime keeps this linkname working for the many
// packages that use it (runtime/time_nofake.go says so next to it).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Instant is a reading of the monotonic clock. Only differences between
// two readings of one process mean anything.
type Instant int64

// Now reads the monotonic clock.
func Now() Instant { return Instant(nanotime()) }

// Since is the time elapsed from start to now.
func Since(start Instant) time.Duration { return time.Duration(nanotime() - int64(start)) }
