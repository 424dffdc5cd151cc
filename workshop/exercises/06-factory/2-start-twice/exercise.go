// Package starttwice is workshop exercise 06-factory/2-start-twice.
//
// # Start twice
//
// Kind: investigate. Minutes: 10. Needs: none. Practises: docs/06-factory.md, "Rules, each with a test in factory_test.go".
//
// A controller starts a factory with a pod informer, waits for it to
// sync, then, later, asks the same factory for a ConfigMap informer and
// calls Start again, and waits again. Then a pod and a ConfigMap are
// created, and once both informers hold them the API server closes every
// watch (srv.CloseWatches, as a restart or a watch's timeout does).
// Reproduce it over the embedded API
// server (kit.StartServer, factory.NewForConfig(srv.Config())) and read
// the server's requests with kit.Requests(srv, resource, rename), with
// rename writing "" as it is and any other resourceVersion as later
// (client-go v0.37.2's informers fetch their state as a stream by
// default). Answer, in kit.Requests' words ("watch rv=X stream" for a
// WATCH with sendInitialEvents=true, "watch rv=X" for a plain one, "list
// rv=X limit=N" for a LIST), every request of the whole run:
//
//   - Pods: for pods, in order;
//   - ConfigMaps: for ConfigMaps, in order.
package starttwice

// Your findings.
var Pods, ConfigMaps []string
