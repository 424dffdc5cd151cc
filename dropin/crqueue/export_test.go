package crqueue

import (
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

// NewTracedPriorityQueueWithLimiter lets the tests hand the wrapper inner's
// rate limiter, as NewQueue does, over a priority queue they build (with
// their own metrics provider).
func NewTracedPriorityQueueWithLimiter[T comparable](name string, inner priorityqueue.PriorityQueue[T], limiter workqueue.TypedRateLimiter[T]) priorityqueue.PriorityQueue[T] {
	return newTracedPriorityQueue(name, inner, limiter)
}
