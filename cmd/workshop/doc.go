// Command workshop runs the workshop as a course: ordered exercises that
// check themselves, progressive hints, reference solutions and progress.
//
//	go run ./cmd/workshop               # the next unsolved exercise: title, file to edit, result
//	go run ./cmd/workshop NAME          # that exercise only: title, file to edit, result
//	go run ./cmd/workshop list          # every exercise with ✓/✗, kind and minutes, in the agenda's order
//	go run ./cmd/workshop watch [NAME]  # rerun the current exercise (or NAME) whenever a file is saved
//	go run ./cmd/workshop hint [NAME]   # the next hint (each call shows one more)
//	go run ./cmd/workshop solution NAME # the reference solution
//	go run ./cmd/workshop reset NAME    # the exercise back as shipped, yours kept in workshop/.backup
//	go run ./cmd/workshop verify [NAME...] # those checkers (default: all); exit 0 only when all pass
//	go run ./cmd/workshop warm          # build everything once, before the room needs it
//	go run ./cmd/workshop selfcheck     # CI: every stub fails without giving its answer away or yielding to trial, every solution passes
//	go run ./cmd/workshop selfcheck 08-liveview  # the same, for one chapter's exercises
//
// NAME is <chapter>/<exercise>, e.g. 01-store/1-bynode; the number prefix of
// the exercise (1-) may be left out, and so may the chapter when the rest is
// unique. --all (on the default command, list, watch and verify) includes the
// exercises that need a cluster, a browser or a trace viewer, which are
// skipped otherwise; --browser includes only those that need a browser (the
// live view's). Naming an exercise checks it whatever it needs.
//
// The participants' page is docs/workshop.md. The instructors' notes and
// the answer key are workshop/INSTRUCTORS.md, which that page does not link:
// it gives every answer away.
//
// # Design
//
// An exercise is one Go package, workshop/exercises/<chapter>/<n>-<name>/,
// in reading order (chapter, then n). The runner offers them in the
// order a room does them: the three-hour session's, which the agenda of
// docs/workshop.md names (the ★ exercises, read from the page's table by
// agendaOrder), then the rest in reading order. Each package holds:
//
//   - the edited file(s), named like the files of its solution directory
//     (almost always one, exercise.go). Its package doc comment carries the
//     task and a line of metadata the runner reads:
//
//     # Title of the exercise
//     Kind: predict|build|investigate. Minutes: 5-15. Needs: none|cluster|browser|viewer. Practises: docs/0N-x.md, "Section".
//
//     (viewer: a trace viewer such as Jaeger; browser: any browser, on the
//     live view.) The stubs compile and are wrong: a predict stub returns
//     no answer, a build stub returns zero values, an investigate stub an
//     empty value. The solution's file has the same doc comment (selfcheck
//     compares them), and the runner reads the metadata from there: a
//     participant who deletes the stub's doc comment, or the whole file,
//     breaks only that exercise, which the runner calls damaged and reset
//     repairs.
//
//   - check_test.go, the checker, under the build tag "workshop", so that
//     `go test ./...` stays green with every exercise unsolved. It runs the
//     participant's answer against the real behaviour of the chapters (and
//     of client-go's tools/cache where that is the point) and says in words
//     what is wrong in the reasoning, never what is right nor which yes/no
//     value to change: a question that points to the rule, and for a list
//     where it first goes wrong (kit.DiffList), or, where that would let a
//     script find the list a position at a time, what kind of mistake it
//     holds. Predictions that are each a small choice get one message for
//     all of them. The runner adds the
//     command for the next hint, and runs only the checker's own tests
//     (-run), so that scratch tests in the folder never decide the verdict.
//     A checker of concurrent code carries the line //workshop:concurrent:
//     the runner runs it under -race and never from go test's cache. A checker that calls the
//     participant's code does it through kit.Returns, which gives up after
//     kit.CallTimeout with its own message; the kit's watchdog (built with
//     the tag) reports a package initialiser that never ends; go test's
//     -timeout, 30 s (2 min for the live view and the cluster), is the
//     backstop, and the runner reports it in words, without the goroutine
//     dump.
//
//   - hints.md: one "## Hint" section per hint, from a nudge to a strong
//     one; none holds the answer (that is `solution NAME`), which a test
//     and the selfcheck check.
//
// workshop/solutions/<chapter>/<n>-<name>/ holds the reference solution: the
// same file names as the edited files. Solutions compile with the module
// (`go vet ./...` covers them) but have no checker of their own: selfcheck
// copies each over its stub, in a temporary copy of the repository, and runs
// the stub's checker.
//
// selfcheck also proves that no checker gives its answer away: it runs
// every checker on its stub and looks for the answer in what it printed.
// For a predict or investigate exercise the answer is the solution's
// exported variables, rendered as a checker would print them (%v, %+v,
// %#v, %q, each string of a list) by a test the selfcheck compiles into the
// exercise package and runs with the stub and with the solution; a
// rendering specific enough (a quoted string, a list) must appear nowhere,
// a plain one (3, true) not in a message that names its variable; no
// hint may hold it, and no other exercise's checker may print it. For a
// build exercise it is the solution's lines of code the stub lacks
// (answers.go).
//
// selfcheck then proves that no predict or investigate exercise can be
// solved by trial (trial.go): with the checker compiled once and every
// prediction set through that test's init, it tries every combination of
// the yes/no values, and it changes only what the checker's messages name
// (setting each named prediction that a few runs would find to its
// answer), and it searches as a script would (the searcher): the page's
// quoted words, the numbers 0-9 and yes/no, a list a position at a time
// where the messages say where it first goes wrong, the predictions
// named by different messages side by side. Passing is a problem (for the
// searcher, within 12 runs), and so is a prediction other than yes/no that
// starts as its answer. It judges the exercises as git's HEAD
// has them, so that it can run on a participant's tree (--worktree: the
// files as they are).
//
// Its time goes into linking test binaries and into checkers that mostly
// wait (an API server starting, a reflector's one-second rule, the live
// view's demo), so the predict and investigate checkers with their
// solutions are linked once, a batch per go test -c, for their own run
// and every trial run, and those runs go side by side, 2 x NumCPU at a
// time; the live view's demo is built once before any checker needs it.
// Its last line gives the time of each phase.
//
// Progress is what the checkers say now: list and verify run every checker
// in one `go test -tags workshop -json` per timeout and race mode over all
// exercise packages, and a cached result is only ever the checker's own.
// go test caches passing results only; list and the default command also
// keep each result they ran in workshop/.results.json (git-ignored),
// keyed by a hash of everything it depends on (cache.go), so that a list
// on an unchanged course runs no go command; verify always asks go test. In a copy of
// the course (the selfcheck, the runner's tests) go test -o keeps each
// checker's binary as well, so one whose files have not changed is not
// linked again (linking is what the build cache does not keep; a
// participant's checkout is spared the 35 MB a binary). What a failing checker
// printed is cut to its messages, a panic's first lines and the first
// lines of anything else, read a line at a time: an answer that prints
// megabytes neither hides the message nor fills memory. The number of
// hints shown per exercise is kept in workshop/.progress.json
// (git-ignored). Exercises whose Needs is not none are skipped by the
// default command, list, watch and verify unless --all (or, for Needs:
// browser, --browser) is given or they are named; their checkers still
// prove the answer on the embedded API server, so selfcheck runs them all.
// Those of 08-liveview run cmd/trace-demo --ui and drive the page through
// its HTTP API (workshop/kit.StartLiveView), so selfcheck's temporary copy
// holds cmd/ too; 08-liveview/5-your-page runs the kit's controller in
// the checker's own process (workshop/kit/ctrlkit.StartYourPage) and reads the
// page through the participant's mux.
//
// reset restores every file of the exercise's directory as the course
// shipped it: from the branch the checkout tracks (on a clone, origin's),
// so that work you committed does not come back as the "stub"; without
// one, from git HEAD. A file it replaces that differs from the shipped one
// is first kept in workshop/.backup/<chapter>/<exercise>/<time>/
// (git-ignored), and reset prints its path.
//
// Helpers for checkers and answers live in workshop/kit.
package main
