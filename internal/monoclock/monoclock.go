package monoclock

import "time"

// origin is the process's first reading: every Instant is a duration from
// it. time.Since of a Time that carries a monotonic reading reads only the
// runtime's monotonic clock (time/time.go, Since: the "common case
// optimization"), which is what the runtime itself recommends over
// linknaming runtime.nanotime (runtime/time_nofake.go, go.dev/issue/67401).
var origin = time.Now()

// Instant is a reading of the monotonic clock. Only differences between
// two readings of one process mean anything.
type Instant time.Duration

// Now reads the monotonic clock.
func Now() Instant { return Instant(time.Since(origin)) }

// Since is the time elapsed from start to now.
func Since(start Instant) time.Duration { return time.Since(origin) - time.Duration(start) }
