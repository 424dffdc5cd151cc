// Package cluster is trace-demo's run against a real cluster (--cluster,
// --kubeconfig, --context): it finds the cluster as kubectl does, checks
// with one LIST and one short WATCH that the resource can be listed and
// watched (so that an unreachable, untrusted or forbidden cluster is one
// clear line, not a reflector retrying in the background), builds the
// informer through chapter 6's factory with the demo's handlers, optionally
// makes its own traffic (--generate, in a namespace of its own, cleaned up
// after), and at the end lets the handlers catch up before it stops.
//
// It sits above the chapters (demo/): only the demo imports it.
package cluster
