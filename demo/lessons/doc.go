// Package lessons is trace-demo's embedded run: the in-process API server
// (internal/apiserver), chapter 6's factory, a pod informer with three
// handlers (two fast, the third slow, or tunable from the live view) on
// the RealFIFO, client-go v0.37.2's queue, or the DeltaFIFO, and the
// lessons that run against it.
//
// The informer fetches its initial state as client-go v0.37.2's does,
// with a stream (a WATCH with sendInitialEvents=true: every object, then a
// bookmark, then the changes on the same connection).
//
// # Lessons
//
// A [Lesson] is one file, lesson_NAME.go, that registers it: its name,
// its line, what to look for in its waterfall, and its run, which waits
// for its effect to reach every handler (never a fixed sleep; it gives up
// with an error after 20 s) and reports what happened, read from the spans
// and the handlers' own records. [RunScript] (trace-demo without --ui) and
// the live view's lesson script (demo/livecontrols) read the same
// table, so adding a lesson is adding a file, and nothing else lists them:
// the lessons are the lesson_*.go files, the script runs them by their
// Order ([Names]), and those with OptIn only when named ([OptInNames]);
// `go run ./cmd/trace-demo --help` lists both under --scenario. The tests
// read the files (TestALessonIsOneFile): each registers one lesson named
// after it, and no other file registers one.
//
// The coalesce and order lessons compare queues, so they run informers of
// their own (queue_lessons.go) in namespace lessons, whatever queue the
// main informer runs on. Their pop loops wait until the lesson's writes
// are queued (popHold, through chapter 5's BeforePop), so they show the
// same on every run.
package lessons
