// Package starttwice is workshop exercise 06-factory/2-start-twice.
//
// # Start twice
//
// Kind: investigate. Minutes: 10. Needs: none. Practises: docs/06-factory.md, "Rules, each with a test in factory_test.go".
//
// A controller starts a factory with a pod informer, waits for it to
// sync, then, later, asks the same factory for a ConfigMap informer and
// calls Start again, and waits again. Reproduce it over the embedded API
// server (kit.StartServer, factory.NewForConfig(srv.Config())) and count
// the server's requests with kit.CountRequests(srv.Requests(), verb,
// resource). Answer:
//
//   - PodLists, PodWatches: pod LIST and WATCH requests at the end;
//   - ConfigMapLists: ConfigMap LIST requests at the end.
package starttwice

// Your findings.
var PodLists, PodWatches, ConfigMapLists = 0, 0, 0
