// Command workshop runs the workshop as a course: ordered exercises that
// check themselves, progressive hints, reference solutions and progress.
//
//	go run ./cmd/workshop               # the next unsolved exercise: title, file to edit, result
//	go run ./cmd/workshop list          # every exercise with ✓/✗, kind and minutes, by chapter
//	go run ./cmd/workshop watch         # rerun the current exercise whenever a file is saved
//	go run ./cmd/workshop hint [NAME]   # the next hint (each call shows one more)
//	go run ./cmd/workshop solution NAME # the reference solution
//	go run ./cmd/workshop reset NAME    # the exercise back as shipped (from the tracked branch, or HEAD)
//	go run ./cmd/workshop verify        # every checker; exit 0 only when all are solved
//	go run ./cmd/workshop warm          # build everything once, before the room needs it
//	go run ./cmd/workshop selfcheck     # CI: every stub fails, every solution passes
//	go run ./cmd/workshop selfcheck 07-liveview  # the same, for one chapter's exercises
//
// NAME is <chapter>/<exercise>, e.g. 01-store/1-bynode; the number prefix of
// the exercise (1-) may be left out, and so may the chapter when the rest is
// unique. --all (on the default command, list, watch and verify) includes the
// exercises that need a cluster or a browser, which are skipped otherwise;
// --browser includes only those that need a browser (the live view's, and
// the trace viewer's).
//
// # Design
//
// An exercise is one Go package, workshop/exercises/<chapter>/<n>-<name>/,
// in reading order (chapter, then n). It holds:
//
//   - the edited file(s), named like the files of its solution directory
//     (almost always one, exercise.go). Its package doc comment carries the
//     task and a line of metadata the runner reads:
//
//     # Title of the exercise
//     Kind: predict|build|investigate. Minutes: 5-15. Needs: none|cluster|browser. Practises: docs/0N-x.md, "Section".
//
//     The stubs compile and are wrong: a predict stub returns no answer, a
//     build stub returns zero values, an investigate stub an empty value.
//
//   - check_test.go, the checker, under the build tag "workshop", so that
//     `go test ./...` stays green with every exercise unsolved. It runs the
//     participant's answer against the real behaviour of the chapters (and
//     of client-go's tools/cache where that is the point) and says what is
//     wrong in words: expected vs got and where to look.
//
//   - hints.md: one "## Hint" section per hint, from a nudge to nearly the
//     answer.
//
// workshop/solutions/<chapter>/<n>-<name>/ holds the reference solution: the
// same file names as the edited files. Solutions compile with the module
// (`go vet ./...` covers them) but have no checker of their own: selfcheck
// copies each over its stub, in a temporary copy of the repository, and runs
// the stub's checker.
//
// Progress is what the checkers say now: list and verify run every checker
// in one `go test -tags workshop -json` over all exercise packages, so Go's
// build and test caches make a second run cheap, but a cached result is
// only ever the checker's own. The number of hints shown per exercise is
// kept in workshop/.progress.json (git-ignored). Exercises whose Needs is not
// none are skipped by the default command, list, watch and verify unless
// --all (or, for Needs: browser, --browser) is given; their checkers still
// prove the answer on the embedded API server, so selfcheck runs them all.
// Those of 07-liveview run cmd/trace-demo --ui and drive the page through
// its HTTP API (workshop/kit.StartLiveView), so selfcheck's temporary copy
// holds cmd/ too.
//
// reset restores the edited files as the course shipped them: from the
// branch the checkout tracks (on a clone, origin's), so that work you
// committed does not come back as the "stub"; without one, from git HEAD.
//
// Helpers for checkers and answers live in workshop/kit.
package main
