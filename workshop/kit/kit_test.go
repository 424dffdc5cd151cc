package kit_test

import (
	"slices"
	"testing"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
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
			if n := kit.CountRequests(srv.Requests(), "list", "pods"); n != 1 {
				t.Errorf("pod lists: got %d, want 1", n)
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
