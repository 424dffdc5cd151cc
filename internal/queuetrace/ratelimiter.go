package queuetrace

import (
	"reflect"
	"strings"
	"unsafe"

	"k8s.io/client-go/util/workqueue"
)

// RateLimiterOf returns the rate limiter of inner when inner is client-go's
// rate-limiting queue (what workqueue.NewTypedRateLimitingQueueWithConfig
// returns: *rateLimitingType[T], rate_limiting_queue.go), else nil.
//
// Why a wrapper needs it: that queue's AddRateLimited is its delaying
// queue's AddAfter with the limiter's When, and the delay it picks is seen
// nowhere else; the delayed entry then fires on the delaying queue's own
// goroutine. A wrapper that forwards AddRateLimited can only guess when
// the key becomes ready, so its metrics (the add, the queue duration)
// and its workqueue.delayed span would be wrong. With the limiter, the
// wrapper makes the same two calls itself and knows the delay.
//
// The field is unexported, so it is read through reflect and unsafe, read
// only, once per queue. If a client-go version renames it, RateLimiterOf
// returns nil and the wrapper falls back to forwarding AddRateLimited (its
// test, TestRateLimiterOfClientGo, then fails). A wrapper that builds
// client-go's queue itself (dropin.NewTracedRateLimitingQueueWithConfig)
// knows the limiter already and does not call it. Ours.
func RateLimiterOf[T comparable](inner any) workqueue.TypedRateLimiter[T] {
	v := reflect.ValueOf(inner)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil
	}
	e := v.Elem()
	if e.Kind() != reflect.Struct || e.Type().PkgPath() != "k8s.io/client-go/util/workqueue" ||
		!strings.HasPrefix(e.Type().Name(), "rateLimitingType[") {
		return nil
	}
	f := e.FieldByName("rateLimiter")
	if !f.IsValid() || !f.CanAddr() {
		return nil
	}
	lim, _ := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(workqueue.TypedRateLimiter[T])
	return lim
}
