// Package demo holds trace-demo's event handlers, the ones every run gives
// the informer it shows: the embedded run's lessons (demo/lessons) and the
// run against a real cluster (demo/cluster) both add them, and both wait
// on what they have seen ([Seen], [Until]) instead of sleeping. Ours:
// nothing here mirrors client-go.
//
// The handlers have a package of their own so that the cluster run does
// not import the lessons to get them; it is named demo, and each handler
// is a type of its own, because the contract's informer.listener is the
// handler's type name plus an index: a waterfall, the live view and the
// workshop's exercises show "*demo.slowHandler#2".
//
// The rest of the demo sits in this folder's packages, on the same floor
// (ARCHITECTURE.md): lessons, cluster, informers, liveview, livecontrols,
// terminal, telemetry, result and demoproc.
package demo
