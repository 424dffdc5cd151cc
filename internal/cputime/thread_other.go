//go:build !linux

package cputime

import "time"

// ThreadID is 0 where [Thread] cannot read a thread's CPU time.
func ThreadID() int { return 0 }

// Thread is not measured on this platform: it returns 0 and false, and a
// figure built from it is reported as not measured, never made up.
func Thread(tid int) (time.Duration, bool) { return 0, false }
