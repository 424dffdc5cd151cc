package queuetrace

import "time"

// LongestProcessing is how long the key that has been processing longest
// (between Get and Done) has been at it by now; 0 when none is. Like
// Stats it knows only what it saw since something began to read. It walks the
// keys the Tracer keeps (waiting and processing) under its lock: a live
// view's poll, not a hot path.
func (q *Tracer[T]) LongestProcessing(now time.Time) time.Duration {
	if !q.keep.Load() {
		return 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.longest_locked(now)
}

func (q *Tracer[T]) longest_locked(now time.Time) time.Duration {
	var longest time.Duration
	for _, k := range q.pending {
		if k.process != nil {
			longest = max(longest, now.Sub(k.start))
		}
	}
	return longest
}
