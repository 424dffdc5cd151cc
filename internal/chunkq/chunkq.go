// Package chunkq is a first-in first-out queue kept in a linked list of
// fixed-size chunks: chapter 4's RealFIFO stores its entries in one, and
// each of chapter 5's listeners its pending notifications.
//
// Why not what client-go uses? The RealFIFO (the_real_fifo.go) keeps one
// slice, appended at the back and re-sliced at the front; a listener
// (k8s.io/utils/buffer.RingGrowing) a ring that doubles when full. When
// the reflector outruns the consumer the backlog grows to tens of
// thousands of entries, and a growing slice or ring reallocates and copies
// everything it holds at each step, so it allocates several times its peak
// and keeps the largest array however short the queue becomes again.
// Chunks are allocated as the backlog grows, no entry is ever copied to
// make room, and emptied chunks are let go or kept as [Queue.MaxSpares]
// says. docs/performance.md has the measurements.
//
// It sits below the chapters (internal/): it imports no package of this
// module. A Queue is not safe for concurrent use: its owner's lock (the
// RealFIFO's) or its single goroutine (a listener's pop) guards it.
package chunkq

import (
	"fmt"
	"iter"
)

// KeepAll as [Queue.MaxSpares] keeps every emptied chunk.
const KeepAll = -1

// DefaultChunkSize is the chunk size of a Queue whose ChunkSize is 0.
const DefaultChunkSize = 256

// Queue is a FIFO of T in chunks of ChunkSize slots. Its zero value is an
// empty queue with the default chunk size that keeps one spare chunk; set
// the fields before the first Push.
//
// Invariants (CheckInvariant):
//   - chunks is empty only in a queue that never held an entry: once a
//     chunk is in use the queue keeps one in use, and an emptied queue
//     starts again at the front of that chunk (head == tail == 0).
//   - chunks[0][head:] (chunks[0][head:tail] when there is one chunk), the
//     full chunks between, and chunks[last][:tail] are the count queued
//     entries, oldest first; more than one chunk implies 0 < tail.
//   - every other slot, and every slot of a spare chunk, is T's zero
//     value, so a popped object can be collected (a stale copy would keep
//     it, and whatever it points to, alive for as long as the chunk lives).
//   - at most MaxSpares chunks are kept spare (any number with KeepAll).
type Queue[T any] struct {
	// ChunkSize is how many entries a chunk holds (0: DefaultChunkSize).
	// Larger chunks mean fewer allocations and more memory held by a
	// nearly empty queue.
	ChunkSize int
	// MaxSpares is how many emptied chunks are kept for later pushes (0:
	// one; KeepAll: every one). One spare is enough for a backlog that
	// rises and falls across a chunk boundary; a backlog that falls to
	// empty and rises again many times (a listener's, drained each time its
	// handler catches up) would allocate its chunks again each time, so it
	// keeps them all, as a doubling ring keeps its largest array.
	MaxSpares int

	// chunks are the chunks in use, oldest first: a slice of slices rather
	// than a linked list, so that a chunk is one allocation (its slots) and
	// the index of chunks, a few words each, is all that is ever copied.
	chunks [][]T
	// head indexes the oldest entry in chunks[0]; tail the slot after the
	// newest in the last chunk.
	head, tail int
	count      int
	spares     [][]T
}

func (q *Queue[T]) size() int {
	if q.ChunkSize > 0 {
		return q.ChunkSize
	}
	return DefaultChunkSize
}

func (q *Queue[T]) maxSpares() int {
	if q.MaxSpares == 0 {
		return 1
	}
	return q.MaxSpares
}

// Len is how many entries are queued.
func (q *Queue[T]) Len() int { return q.count }

// Push queues v at the back.
func (q *Queue[T]) Push(v T) {
	if n := len(q.chunks); n == 0 || q.tail == len(q.chunks[n-1]) {
		var c []T
		if k := len(q.spares); k > 0 {
			c = q.spares[k-1]
			q.spares[k-1] = nil
			q.spares = q.spares[:k-1]
		} else {
			c = make([]T, q.size())
		}
		if n == 0 {
			q.head = 0
		}
		q.chunks = append(q.chunks, c)
		q.tail = 0
	}
	q.chunks[len(q.chunks)-1][q.tail] = v
	q.tail++
	q.count++
}

// Pop removes and returns the oldest entry; ok is false when the queue is
// empty.
func (q *Queue[T]) Pop() (v T, ok bool) {
	if q.count == 0 {
		return v, false
	}
	first := q.chunks[0]
	v = first[q.head]
	var zero T
	first[q.head] = zero
	q.head++
	q.count--
	q.afterPop()
	return v, true
}

// PopFront removes the n oldest entries, appending them to dst oldest
// first, and returns dst. It panics if fewer than n are queued: a caller
// bug, and without the check the loop would never end.
func (q *Queue[T]) PopFront(n int, dst []T) []T {
	if n < 0 || n > q.count {
		panic(fmt.Sprintf("chunkq: pop %d of %d", n, q.count))
	}
	for n > 0 {
		first := q.chunks[0]
		end := len(first)
		if len(q.chunks) == 1 {
			end = q.tail
		}
		run := first[q.head:min(q.head+n, end)]
		dst = append(dst, run...)
		clear(run)
		q.head += len(run)
		q.count -= len(run)
		n -= len(run)
		q.afterPop()
	}
	return dst
}

// afterPop moves on after a pop: an emptied queue starts again at the
// front of its one chunk, rather than walk on into a new one; a used-up
// first chunk (the queue not being empty, it is not the last) is let go
// or kept as a spare.
func (q *Queue[T]) afterPop() {
	switch {
	case q.count == 0:
		q.head, q.tail = 0, 0
	case q.head == len(q.chunks[0]):
		// Shift the index down rather than re-slice it from the front: a
		// re-sliced index loses capacity at its front with every chunk
		// dropped, and the next push past its end would allocate a new one.
		// The copy is a few words per chunk in use.
		done := q.chunks[0]
		n := copy(q.chunks, q.chunks[1:])
		q.chunks[n] = nil
		q.chunks = q.chunks[:n]
		q.head = 0
		if limit := q.maxSpares(); limit == KeepAll || len(q.spares) < limit {
			q.spares = append(q.spares, done)
		}
	}
}

// All yields the queued entries, oldest first, without removing them. The
// queue must not change during the iteration.
func (q *Queue[T]) All() iter.Seq[T] {
	return func(yield func(T) bool) {
		start := q.head
		for i, c := range q.chunks {
			end := len(c)
			if i == len(q.chunks)-1 {
				end = q.tail
			}
			for _, v := range c[start:end] {
				if !yield(v) {
					return
				}
			}
			start = 0
		}
	}
}

// Chunks counts the chunks held: in use, and spare.
func (q *Queue[T]) Chunks() (inUse, spare int) { return len(q.chunks), len(q.spares) }

// CheckInvariant verifies the invariants stated on Queue, for tests;
// isZero says whether a slot holds T's zero value (T need not be
// comparable, and a comparable T can hold an uncomparable interface).
func (q *Queue[T]) CheckInvariant(isZero func(T) bool) error {
	if len(q.chunks) == 0 && (q.head != 0 || q.tail != 0 || q.count != 0) {
		return fmt.Errorf("no chunk, but head %d, tail %d, count %d", q.head, q.tail, q.count)
	}
	if q.head < 0 || q.head > q.size() || q.tail < 0 || q.tail > q.size() {
		return fmt.Errorf("head %d or tail %d outside a chunk", q.head, q.tail)
	}
	if q.count == 0 && (q.head != 0 || q.tail != 0) {
		return fmt.Errorf("empty, but head %d and tail %d: not at its chunk's front", q.head, q.tail)
	}
	if len(q.chunks) > 1 && q.tail == 0 {
		return fmt.Errorf("empty last chunk after the first")
	}
	live := 0
	for i, c := range q.chunks {
		if len(c) != q.size() {
			return fmt.Errorf("chunk %d has %d slots, not %d", i, len(c), q.size())
		}
		lo, hi := 0, len(c)
		if i == 0 {
			lo = q.head
		}
		if i == len(q.chunks)-1 {
			hi = q.tail
		}
		if lo > hi {
			return fmt.Errorf("head %d past tail %d", lo, hi)
		}
		live += hi - lo
		for j, v := range c {
			if (j < lo || j >= hi) && !isZero(v) {
				return fmt.Errorf("unused slot %d of chunk %d still holds %v", j, i, v)
			}
		}
	}
	if live != q.count {
		return fmt.Errorf("count %d, but %d entries in the chunks", q.count, live)
	}
	for i, c := range q.spares {
		for j, v := range c {
			if !isZero(v) {
				return fmt.Errorf("slot %d of spare %d holds %v", j, i, v)
			}
		}
	}
	if limit := q.maxSpares(); limit != KeepAll && len(q.spares) > limit {
		return fmt.Errorf("%d spares kept, at most %d allowed", len(q.spares), limit)
	}
	return nil
}
