package kit

import (
	"time"

	"k8s.io/client-go/tools/cache"
)

// The kit's handlers for the exercises of chapter 7 (docs/07-your-controller.md).
// What runs them on package dropin (StartDropinInformer, NewController,
// Burst) is in package ctrlkit: only the checkers that need dropin link it.

// The three controllers of exercise 07-controller/1: each one's handler is
// a method of its own type, so a trace names it (informer.listener is the
// handler's functions' package and receiver type, then "#" and its index).
// One of them is slow, as a controller that calls out of its handler is:
// the exercise is to find it in the spans.

// AuditController records what changed.
type AuditController struct{ Recorder }

// OnChange is its handler's one function.
func (a *AuditController) OnChange(obj any) { a.record(describe("change", obj)) }

// QuotaController recounts a namespace's pods on every change.
type QuotaController struct{ Recorder }

// OnChange is its handler's one function.
func (q *QuotaController) OnChange(obj any) {
	// Recounting asks the (imagined) quota service, in the handler: the
	// slow handler the exercise's spans show.
	time.Sleep(quotaServiceLatency)
	q.record(describe("change", obj))
}

// quotaServiceLatency is how long QuotaController's handler waits on each
// change.
const quotaServiceLatency = 15 * time.Millisecond

// LabelController checks every pod's labels.
type LabelController struct{ Recorder }

// OnChange is its handler's one function.
func (l *LabelController) OnChange(obj any) { l.record(describe("change", obj)) }

// FuncsFor is a client-go handler calling f on every add, update and
// delete, as a controller's handler is usually written. Not inlined: the
// listener's name (dropin's nameForHandler) holds its closure's name,
// which must not depend on the test that calls it (exercise
// 07-controller/1 asks for that name).
//
//go:noinline
func FuncsFor(f func(obj any)) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{AddFunc: f, UpdateFunc: func(_, o any) { f(o) }, DeleteFunc: f}
}
