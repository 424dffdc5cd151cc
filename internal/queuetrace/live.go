package queuetrace

import "time"

// longest_locked is how long the key that has been processing longest
// (between Get and Done) has been at it by now; 0 when none is. Like the
// counts it knows only what it saw since something began to read. It walks
// the keys the Tracer keeps (waiting and processing): Stats calls it, a
// live view's poll, not a hot path.
func (q *Tracer[T]) longest_locked(now time.Time) time.Duration {
	var longest time.Duration
	for _, k := range q.pending {
		if k.process != nil {
			longest = max(longest, now.Sub(k.start))
		}
	}
	return longest
}
