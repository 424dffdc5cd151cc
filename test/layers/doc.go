// Package layers holds the test that keeps the repository's import arrows
// pointing down (layers_test.go). ARCHITECTURE.md draws the floors; this
// test is their definition:
//
//	programs   cmd/*, examples/**, workshop/**, test/*, hack/**
//	demo       demo, demo/*            (the demo's parts)
//	dropin     dropin, dropin/crqueue  (ours behind client-go's interfaces)
//	probe      liveprobe               (the live view's reflector probe)
//	chapter 6  chapters/06-factory
//	…          each chapter on its own floor
//	chapter 1  chapters/01-store
//	helpers    internal/*              (below the chapters)
//
// Every package of the repository, the nested modules' too (dropin/crqueue,
// examples/controller-runtime; hack/etcd and hack/kube-apiserver hold none
// of ours), is on exactly one floor by its folder; a package on no floor
// fails the test. An import, tests' imports included, points to a lower
// floor, or along its own floor only where the test's sameFloor list
// names it; an entry of that list that no import uses fails too.
// TestViolationsCatchWrongImports proves the check fails on wrong imports
// (dropin importing the demo, a chapter importing a later one or dropin,
// an unlisted import along a floor, a package on no floor).
//
// The test parses the Go files' import lines itself instead of asking go
// list, so that it sees every build tag's files and the nested modules
// without downloading their dependencies.
package layers
