// Package poploop is workshop exercise 05-processor/5-pop-loop.
//
// # A listener's pop loop
//
// Kind: build. Minutes: 15. Needs: none. Practises: docs/05-processor.md, "Why the buffer is unbounded, and what that costs".
//
// Each listener of a shared informer has two goroutines: pop moves
// notifications from addCh (fed by distribute) to nextCh (read by run,
// which calls the handler), buffering whatever run has not taken yet.
// Write Pop, that loop:
//
//   - everything received on in is sent on out, in order;
//   - a send on in never waits for out's reader: the buffer grows as
//     needed (client-go uses a growing ring buffer,
//     k8s.io/utils/buffer.RingGrowing; a slice used as a queue will do);
//   - when in is closed, Pop closes out and returns at once; whatever is
//     still buffered is dropped (a removed handler gets nothing more);
//   - Pop does all this in the goroutine that calls it (the listener's
//     pop goroutine) and starts no other.
//
// Hint of the trick client-go uses: a send on a nil channel blocks
// forever, so a select can switch its send case off while there is
// nothing to send.
package poploop

// Pop forwards in to out through an unbounded buffer.
func Pop(in <-chan any, out chan<- any) {
}
