// Package starttwice is workshop exercise 06-factory/2-start-twice.
//
// # Start twice
//
// Kind: investigate. Minutes: 10. Needs: none. Practises: docs/06-factory.md, "Rules, each with a test in factory_test.go".
//
// A controller starts a factory with a pod informer, waits for it to
// sync, then, later, asks the same factory for a ConfigMap informer and
// calls Start again, and waits again. Reproduce it over the embedded API
// server (kit.StartServer, factory.NewForConfig(srv.Config())) and read
// the server's requests with kit.Requests(srv, resource, nil) (an
// informer's first request is a stream: a WATCH with
// sendInitialEvents=true that fetches the whole state, as client-go
// v0.37.2's does). Answer:
//
//   - PodStreams, PodWatches: pod streams and plain WATCH requests at the
//     end;
//   - ConfigMapStreams: ConfigMap streams at the end.
package starttwice

// Your findings.
var PodStreams, PodWatches, ConfigMapStreams = 1, 0, 1 // the second Start starts only what is not running yet; each stream goes on as its watch
