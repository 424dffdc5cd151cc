//go:build workshop

package latehandler

import (
	"slices"
	"testing"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestPredictions(t *testing.T) {
	srv := kit.StartServer(t)
	kit.CreatePods(t, srv, "p", 3)
	spans := kit.NewSpans()
	inf := kit.StartInformer(t, srv, kit.InformerOptions{Queue: processor.RealFIFOQueue, Spans: spans}, &kit.Recorder{})
	late := &kit.Recorder{}
	reg, err := inf.AddEventHandler(late)
	if err != nil {
		t.Fatal(err)
	}
	kit.WaitFor(t, "the late handler to sync", reg.HasSynced)
	got := late.Strings()
	slices.Sort(got)
	initial := true
	for _, c := range late.Calls() {
		if c.Initial != Initial {
			initial = false
		}
	}
	// One message for both: one about Initial alone would say which
	// yes/no value to flip. Names that are off are said alone, so that
	// the message says nothing about Initial.
	if kit.NamesOff(Calls, got) {
		t.Errorf("Calls: your calls follow the late handler's, but name the pods otherwise than a kit.Recorder writes them: the task gives their names and namespace, and Strings() writes each as its key")
	} else if !slices.Equal(Calls, got) || !initial {
		t.Errorf("Calls and Initial are not the calls the late handler got (sorted) and the isInInitialList they came with: what has the late handler missed, and how does the informer make up for it?")
	}
	inf.Stop()
	var roots []string
	for _, s := range spans.Named("OnAdd", "default/p-0") {
		for _, x := range spans.InTrace(s) {
			if !x.Parent().IsValid() && !slices.Contains(roots, x.Name()) {
				roots = append(roots, x.Name())
			}
		}
	}
	if !slices.Contains(roots, Root) {
		t.Errorf("Root: you predicted %q, not the name of a root span of p-0's OnAdd calls' traces", Root)
	}
	if Root == "ListAndWatch list" {
		t.Errorf("Root: %q is the first handler's trace, from the LIST; the late handler's adds come from elsewhere", Root)
	}
}
