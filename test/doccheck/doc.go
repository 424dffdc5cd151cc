// Package doccheck keeps the code quoted in docs/*.md identical to the code
// that compiles.
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
package doccheck
