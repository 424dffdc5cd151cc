// Package ctrlkit is the part of the workshop's kit (package kit) that
// runs controllers on package dropin, for the exercises of chapter 7
// (docs/07-your-controller.md) and 08-liveview/5-your-page:
//
//   - [StartDropinInformer] runs dropin's informer (ours behind
//     client-go's interface) on the embedded server's pods, traced, with
//     the handlers you give it (kit.FuncsFor, kit.AuditController, ...).
//   - [NewController] is a client-go style controller on a traced
//     workqueue; [Burst] plays chapter 7's scenario with one.
//   - [NewYourPage] runs a controller on dropin (a traced queue, three
//     handlers, one of them slow) in this process, beside a mux on which
//     a participant's code mounted the live view, and plays a scenario
//     whose outcome follows from its construction; [StartYourPage] is the
//     same for a checker.
//
// Why a package of its own: dropin's factory (dropin/factory.go) brings in
// client-go's typed clientset and its generated informers, with their
// listers and apply configurations, about twice the packages the rest of
// the kit needs (777 against 386). Every checker links the
// packages its test imports; kept apart, the other forty-odd checkers
// link in about a third of the time (0.7 s against 2.2 s on two cores),
// which a participant waits for on every run, and the selfcheck 92 times.
//
// Ours: the workshop's, with no client-go counterpart.
package ctrlkit
