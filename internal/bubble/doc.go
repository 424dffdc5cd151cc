// Package bubble tells which testing/synctest bubble, if any, the calling
// goroutine runs in.
//
// Why a process-wide reader needs to know. A channel or timer made inside
// a bubble belongs to it: the runtime ends the whole process ("send on
// synctest channel from outside bubble", runtime/chan.go) when a
// goroutine outside the bubble operates on it, and it reads the bubble's
// fake clock. controller-runtime's priority queue answers Len by first
// moving its add buffer into the queue (priorityqueue.go, Len and
// lockedFlushAddBuffer), which signals a channel made with the queue and
// reads the queue's clock. So the live view's history sampler, a goroutine
// of the process, killed the test binary of a controller author whose
// synctest test made a traced priority queue while a live view was open
// (ours did, in CI). The registry therefore reads an object only from the
// bubble it was made in ([ID] at the object's birth equals [ID] at the
// read).
//
// Ours: neither client-go nor controller-runtime keeps process-wide
// readers of its queues.
package bubble
