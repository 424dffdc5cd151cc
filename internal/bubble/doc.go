// Package bubble tells which testing/synctest bubble, if any, the calling
// goroutine runs in.
//
// Why a process-wide reader needs to know. A channel made inside a bubble
// belongs to it: the runtime ends the whole process ("fatal error: send on
// synctest channel from outside bubble", runtime/chan.go) when a goroutine
// outside the bubble sends on it. And time.Now reads the caller's clock:
// the bubble's fake one inside, the real one outside. controller-runtime's
// priority queue answers Len by first moving its add buffer into the queue
// (priorityqueue.go, Len and lockedFlushAddBuffer), which signals the
// queue's channels and stamps delayed items with the caller's time. So the
// live view's history sampler, a goroutine of the process, killed the test
// binary of a controller author whose synctest test made a traced priority
// queue while a live view was open (it killed ours, in CI). dropin's
// registry therefore reads a queue only from the bubble it was made in
// ([ID] when the queue is made equals [ID] at the read).
//
// Ours: neither client-go nor controller-runtime keeps process-wide
// readers of its queues.
package bubble
