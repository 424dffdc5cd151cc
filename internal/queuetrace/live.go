package queuetrace

import "time"

// LongestProcessing is how long the key that has been processing longest
// (between Get and Done) has been at it by now; 0 when none is. Like
// Stats it knows only what it saw while tracing was on. It walks the
// keys the Tracer keeps (waiting and processing) under its lock: a live
// view's poll, not a hot path.
func (q *Tracer[T]) LongestProcessing(now time.Time) time.Duration {
	if q.inProcess.Load() == 0 {
		return 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	var longest time.Duration
	for _, k := range q.pending {
		if k.process != nil {
			longest = max(longest, now.Sub(k.start))
		}
	}
	return longest
}
