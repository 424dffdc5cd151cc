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
// Each calls out to a service of its own from its handler, as many
// controllers do, and one of those services is slow: the exercise is to
// find which controller from the spans alone, so this file does not
// spell it out.

// AuditController records what changed, in the audit log.
type AuditController struct{ Recorder }

// OnChange is its handler's one function.
func (a *AuditController) OnChange(obj any) { callOut(auditLog); a.record(describe("change", obj)) }

// QuotaController recounts a namespace's pods on every change, with the
// quota service.
type QuotaController struct{ Recorder }

// OnChange is its handler's one function.
func (q *QuotaController) OnChange(obj any) { callOut(quotaService); q.record(describe("change", obj)) }

// LabelController checks every pod's labels against the label policy.
type LabelController struct{ Recorder }

// OnChange is its handler's one function.
func (l *LabelController) OnChange(obj any) { callOut(labelPolicy); l.record(describe("change", obj)) }

// service is an (imagined) service a controller calls; its value encodes
// how long it takes to answer, in milliseconds modulo 17.
type service uint32

const (
	auditLog     service = 7157
	quotaService service = 6628
	labelPolicy  service = 8551
)

// callOut waits as long as s takes to answer.
func callOut(s service) {
	if d := time.Duration(s%17) * time.Millisecond; d > 0 {
		time.Sleep(d)
	}
}

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
