// Package kit is the workshop's toolbox: small public helpers that the
// exercises' checkers use and that participants may use in their answers.
//
// It replaces the unexported test helpers the prose exercises used to borrow
// (popAll and pendingLength of the chapters' tests, newEnv of chapter 3),
// which a participant writing in another package cannot call:
//
//   - [StartServer] starts the embedded API server (internal/apiserver) and
//     stops it when the test ends; faults are the server's own methods
//     (Inject, Compact, CloseWatches, Stop/Restart, SendBookmarks, ...).
//   - [Pod] and [CreatePods] make pods.
//   - [ListWatch] (HTTP) and [InProcessListWatch] (for testing/synctest
//     bubbles, where a goroutine blocked on a socket would stop the fake
//     clock) connect a reflector or informer to that server.
//   - [StartInformer] runs chapter 5's shared informer on the queue you name,
//     with [Recorder] handlers that record every call.
//   - [Spans] records OpenTelemetry spans and finds them by name and key.
//   - [Drain] pops everything queued in a DeltaFIFO or RealFIFO and describes
//     it as text; [DescribeDeltas] describes one pop.
//   - [NewRecordingStore] is a chapter-1 store that records a reflector's
//     calls ("Replace default/a default/b", "Add default/c").
//   - [Requests] describes the server's LIST and WATCH requests with their
//     resourceVersion and limit, renamed with [RenameRVs] in the exercises'
//     words ("S", "later"); [CountRequests] counts them by verb.
//   - [StartLiveView] runs `trace-demo --ui` (the live view) and drives
//     its page through the page's own HTTP API: [LiveView.Press] a
//     control, [LiveView.State] and [LiveView.WaitState] read the boxes and
//     the event list, [LiveView.Trace] opens an event's waterfall.
//   - Package ctrlkit (workshop/kit/ctrlkit) runs controllers on package
//     dropin: chapter 7's (StartDropinInformer, NewController, Burst) and
//     08-liveview/5-your-page's (NewYourPage, StartYourPage). Apart, so
//     that only the checkers that need dropin link it.
//   - [Run] runs a Reflector's, Controller's or informer's RunWithContext
//     and returns a stop that waits for it; [WaitFor] waits for a
//     condition, failing the test with its description.
//   - For checkers: [Returns] calls a participant's code and fails the
//     test, in words, when it does not return within [CallTimeout] or
//     panics; [DiffList] says where a predicted list first goes wrong
//     without printing the real one (a checker never prints the answer).
//     Built with the workshop tag (in a checker), the kit also watches the
//     test binary's start: an exercise package whose initialisation never
//     ends is reported after [InitTimeout], naming the line.
//
// The kit is not a mirror of client-go: it has no upstream counterpart.
package kit
