// Package doccheck keeps the docs true to the code: the code they quote is
// identical to the code that compiles, and the Go names and repository
// paths they mention exist. It is ours (client-go has no docs to check).
//
// A doc quotes a declaration by putting a marker line right before a fenced
// code block:
//
//	<!-- code: chapters/01-store/thread_safe_store.go storeIndex.updateSingleIndex_locked -->
//	```go
//	...
//	```
//
// The marker names a file (from the repository root) and a top-level
// declaration in it: a function, a type, a method as Receiver.Method, or a
// const/var name. Its test fails when a quoted block differs from the source,
// so prose cannot silently drift from the code it explains;
// `go test ./test/doccheck -update` rewrites the blocks from the source.
//
// Its other test, TestDocsNameOnlyWhatExists, reads every backticked span of
// the docs (docs/*.md, README.md, ARCHITECTURE.md): a Go name (`Foo`,
// `pkg.Foo`, `Type.Method`) must exist in this repository or in client-go
// v0.37.2 (or, qualified by a package name, in a package the modules
// depend on: OTel, apimachinery, controller-runtime), a repository path
// (`chapters/04-deltafifo/consumer.go`, `./cmd/trace-demo`, a relative
// link) must exist, and in a "`file.go` · `name`" table the file must
// declare the name. Deliberate exceptions go in the test's allow-lists, each
// with its reason.
package doccheck
