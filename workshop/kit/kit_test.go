package kit_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestDrainDescribesEveryPopOfBothQueues(t *testing.T) {
	d := deltafifo.NewDeltaFIFOWithOptions(deltafifo.DeltaFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc})
	r := deltafifo.NewRealFIFOWithOptions(deltafifo.RealFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc, KnownObjects: store.NewStore(store.MetaNamespaceKeyFunc)})
	for _, q := range []deltafifo.Queue{d, r} {
		if err := q.Add(kit.Pod("", "a", kit.WithRV("1"))); err != nil {
			t.Fatal(err)
		}
		if err := q.Update(kit.Pod("", "a", kit.WithRV("2"))); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := kit.Drain(d), []string{"default/a: Added@1 Updated@2"}; !slices.Equal(got, want) {
		t.Errorf("DeltaFIFO: got %q, want %q", got, want)
	}
	if got, want := kit.Drain(r), []string{"default/a: Added@1", "default/a: Updated@2"}; !slices.Equal(got, want) {
		t.Errorf("RealFIFO: got %q, want %q", got, want)
	}
}

func TestStartInformerRecordsCallsAndSpansOnBothQueues(t *testing.T) {
	for _, q := range []processor.QueueKind{processor.RealFIFOQueue, processor.DeltaFIFOQueue} {
		t.Run(q.String(), func(t *testing.T) {
			srv := kit.StartServer(t)
			kit.CreatePods(t, srv, "web", 2)
			spans := kit.NewSpans()
			rec := &kit.Recorder{}
			inf := kit.StartInformer(t, srv, kit.InformerOptions{Queue: q, Spans: spans}, rec)
			if err := srv.Delete(apiserver.Pods, "default", "web-0"); err != nil {
				t.Fatal(err)
			}
			kit.WaitFor(t, "the delete", func() bool { return rec.Len() == 3 })
			got := rec.Strings()
			slices.Sort(got[:2])
			if want := []string{"add default/web-0", "add default/web-1", "delete default/web-0"}; !slices.Equal(got, want) {
				t.Errorf("calls: got %q, want %q", got, want)
			}
			if c := rec.Calls()[0]; !c.Initial {
				t.Errorf("first add not flagged initial: %+v", c)
			}
			inf.Stop()
			if n := len(spans.Named("HandleDeltas", "default/web-0")); n != 2 {
				t.Errorf("HandleDeltas spans for default/web-0: got %d, want 2 (add, delete)", n)
			}
			// Today's conversation: one streaming WATCH brings the initial
			// state and stays open for the delete; no LIST at all.
			if got, want := kit.Requests(srv, "pods", nil), []string{"watch rv= stream"}; !slices.Equal(got, want) {
				t.Errorf("pod requests: got %q, want %q", got, want)
			}
		})
	}
}

func TestDescribeDeltasShowsTombstonesAndAtomicRelists(t *testing.T) {
	known := store.NewStore(store.MetaNamespaceKeyFunc)
	_ = known.Add(kit.Pod("", "x", kit.WithRV("5")))
	d := deltafifo.NewDeltaFIFOWithOptions(deltafifo.DeltaFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc, KnownObjects: known})
	_ = d.Replace(nil, "9")
	if got, want := kit.Drain(d), []string{"default/x: Deleted@tombstone(5)"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	r := deltafifo.NewRealFIFOWithOptions(deltafifo.RealFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc, AtomicEvents: true})
	_ = r.Replace([]any{kit.Pod("", "y")}, "9")
	if got, want := kit.Drain(r), []string{"ReplacedAll[default/y]"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A reflector in a synctest bubble over the in-process list-watch: the
// recording store sees the stream's Replace and a watched Add, and the
// request log reads as documented; with the embedded server unable to
// stream, the same reflector falls back to LIST, then WATCH.
func TestInProcessListWatchRecordingStoreAndRequests(t *testing.T) {
	srv := kit.StartServer(t)
	kit.CreatePods(t, srv, "p", 1)
	first := srv.ResourceVersion()
	watchInBubble(t, srv, func(t *testing.T, s *kit.RecordingStore) {
		if _, err := srv.Create(kit.Pod("", "late")); err != nil {
			t.Fatal(err)
		}
		kit.WaitFor(t, "the watched add", func() bool { return len(s.Calls()) == 2 })
		if got, want := s.Calls(), []string{"Replace default/p-0", "Add default/late"}; !slices.Equal(got, want) {
			t.Errorf("store calls: got %q, want %q", got, want)
		}
	})
	if got, want := kit.Requests(srv, "pods", initialAsS(first)), []string{"watch rv= stream"}; !slices.Equal(got, want) {
		t.Errorf("requests: got %q, want %q", got, want)
	}

	srv2 := kit.StartServer(t)
	kit.CreatePods(t, srv2, "p", 1)
	srv2.SetWatchListEnabled(false)
	first2 := srv2.ResourceVersion()
	watchInBubble(t, srv2, nil)
	if got, want := kit.Requests(srv2, "pods", initialAsS(first2)), []string{"watch rv= stream refused=422", "list rv=0 limit=500", "watch rv=S"}; !slices.Equal(got, want) {
		t.Errorf("requests from a server that cannot stream: got %q, want %q", got, want)
	}
}

// watchInBubble runs a reflector over srv's pods, into a new recording
// store, inside a synctest bubble (kit.InProcessListWatch) until its WATCH
// is open; then, if then is not nil, calls it in the bubble with the store.
func watchInBubble(t *testing.T, srv *apiserver.Server, then func(t *testing.T, s *kit.RecordingStore)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		s := kit.NewRecordingStore()
		r := reflector.NewReflector(kit.InProcessListWatch(srv, apiserver.Pods), &corev1.Pod{}, s, 0)
		stop := kit.Run(r.RunWithContext)
		defer stop()
		kit.WaitFor(t, "the watch", func() bool { return srv.WatchCount() == 1 })
		if then != nil {
			then(t, s)
		}
	})
}

// initialAsS is a rename for kit.Requests that shows first, the initial
// state's resourceVersion, as S and any other as it is (so that a failure
// shows the real one).
func initialAsS(first string) func(rv string) string {
	return func(rv string) string {
		if rv == first {
			return "S"
		}
		return rv
	}
}

// CountStateFetches counts what fetched the whole state: on a server that
// cannot stream, the refused stream and the LIST it falls back to; on one
// that can, the one stream.
func TestCountStateFetches(t *testing.T) {
	for _, disable := range []bool{true, false} {
		srv := kit.StartServer(t, apiserver.Options{DisableWatchList: disable})
		kit.CreatePods(t, srv, "p", 1)
		watchInBubble(t, srv, nil)
		want := 1
		if disable {
			want = 2
		}
		if n := kit.CountStateFetches(srv.Requests(), "pods"); n != want {
			t.Errorf("DisableWatchList %v: state fetches: got %d, want %d; requests %q", disable, n, want, kit.Requests(srv, "pods", nil))
		}
	}
}

func TestRenameRVsWritesTheExercisesWords(t *testing.T) {
	rename := kit.RenameRVs(map[string]string{"12": "S", "15": "B"})
	for rv, want := range map[string]string{"": "", "0": "0", "12": "S", "15": "B", "13": "later"} {
		if got := rename(rv); got != want {
			t.Errorf("rv %q: got %q, want %q", rv, got, want)
		}
	}
}

func TestWaitForFailsWithItsDescription(t *testing.T) {
	old := kit.WaitTimeout
	kit.WaitTimeout = 10 * time.Millisecond
	defer func() { kit.WaitTimeout = old }()
	ft := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		kit.WaitFor(ft, "something that never happens", func() bool { return false })
	}()
	<-done
	if ft.msg != "timed out waiting for something that never happens" {
		t.Errorf("WaitFor's failure: got %q", ft.msg)
	}
}

// fakeT records Fatalf instead of ending the test.
type fakeT struct {
	testing.TB
	msg string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// failT records what a checker would report, without ending anything.
type failT struct {
	testing.TB
	failed bool
	msg    string
}

func (f *failT) Helper()                        {}
func (f *failT) FailNow()                       { f.failed = true }
func (f *failT) Fatalf(format string, a ...any) { f.failed, f.msg = true, fmt.Sprintf(format, a...) }

func TestReturnsReportsAHangAPanicAndAFatalInside(t *testing.T) {
	defer func(d time.Duration) { kit.CallTimeout = d }(kit.CallTimeout)
	kit.CallTimeout = 200 * time.Millisecond
	block := make(chan struct{})
	defer close(block)
	for _, c := range []struct {
		name   string
		fn     func()
		failed bool
		msg    string
	}{
		{"returns", func() {}, false, ""},
		{"hangs", func() { <-block }, true, "Answer did not return within 200ms"},
		{"loops", func() {
			for {
				runtime.Gosched()
			}
		}, true, "Answer did not return within 200ms"},
		//lint:ignore SA5000 the panic is what this case checks
		{"panics", func() { var m map[string]int; m["x"] = 1 }, true, "Answer panicked: assignment to entry in nil map"},
		{"fails the test itself", func() { runtime.Goexit() }, true, ""},
	} {
		f := &failT{TB: t}
		kit.Returns(f, "Answer", c.fn)
		if f.failed != c.failed || !strings.HasPrefix(f.msg, c.msg) {
			t.Errorf("%s: failed %v, message %q; want %v, %q…", c.name, f.failed, f.msg, c.failed, c.msg)
		}
	}
}

func TestDiffListSaysWhatIsWrongWithoutTheRealList(t *testing.T) {
	real := []string{"add default/p", "delete default/p"}
	for _, c := range []struct {
		yours []string
		want  string
	}{
		{real, ""},
		{nil, "you wrote no entry"},
		{[]string{"add default/p", "update default/p"}, `your entry 2 ("update default/p") is the first that is not what happened`},
		{[]string{"add default/p"}, "your 1 entries are right as far as they go, but there were more"},
		{append(slices.Clone(real), "add default/p"), "there were fewer entries than your 3: the first 2 are right"},
	} {
		got := kit.DiffList(c.yours, real)
		if got != c.want {
			t.Errorf("DiffList(%q): %q, want %q", c.yours, got, c.want)
		}
		if got != "" && strings.Contains(got, "delete default/p") {
			t.Errorf("DiffList(%q) gives the real list away: %q", c.yours, got)
		}
	}
}

func TestNamesOffTellsANameFromAReasoning(t *testing.T) {
	real := []string{"default/x: Updated@9 Deleted@tombstone(9)", "add default/p-0"}
	for _, c := range []struct {
		yours []string
		want  bool
	}{
		{[]string{"x: Updated@9 Deleted@tombstone(9)", "add default/p-0"}, true},   // no namespace
		{[]string{"default/x: Updated@9 Deleted@tombstone(9)", "add pod-0"}, true}, // another name
		{real, false}, // equal: nothing off
		{[]string{"x: Updated@9 Deleted@tombstone(5)", "add default/p-0"}, false},    // a reasoning off too
		{[]string{"default/x: Deleted@tombstone(9)", "add default/p-0"}, false},      // an entry left out
		{[]string{"x Updated@9 Deleted@tombstone(9)", "add default/p-0"}, false},     // not the notation
		{[]string{"default/x: Updated@9 Deleted@tombstone(9)", "update p-0"}, false}, // another call
		{[]string{"add default/p-0"}, false},                                         // fewer entries
	} {
		if got := kit.NamesOff(c.yours, real); got != c.want {
			t.Errorf("NamesOff(%q): %v, want %v", c.yours, got, c.want)
		}
	}
}
