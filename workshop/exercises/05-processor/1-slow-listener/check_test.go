//go:build workshop

package slowlistener

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestFindings(t *testing.T) {
	srv := kit.StartServer(t)
	spans := kit.NewSpans()
	fast, slow := &kit.Recorder{}, &kit.Recorder{Delay: 20 * time.Millisecond}
	inf := kit.StartInformer(t, srv, kit.InformerOptions{Queue: processor.RealFIFOQueue, Spans: spans}, fast, slow)
	// One pod at a time, each created once the fast handler has the one
	// before: its buffer is then empty whenever a notification arrives
	// (pending 0, always), while the slow one, 20 ms a call, falls behind.
	// Created all at once, a burst that reached both listeners before
	// either handler ran (a loaded machine: the selfcheck runs checkers in
	// parallel) filled both buffers alike and the two maxima tied.
	for i := range 30 {
		kit.CreatePods(t, srv, fmt.Sprint("p", i), 1)
		kit.WaitFor(t, "the fast handler has the new pod", func() bool { return fast.Len() == i+1 })
	}
	kit.WaitFor(t, "every pod at both handlers", func() bool { return fast.Len() == 30 && slow.Len() == 30 })
	inf.Stop()
	pops := len(spans.Named("pop", ""))

	maxPending := map[string]int{}
	for _, s := range spans.Named("pop", "") {
		n, _ := strconv.Atoi(kit.Attr(s, "informer.listener.pending"))
		l := kit.Attr(s, "informer.listener")
		maxPending[l] = max(maxPending[l], n)
	}
	slowest := ""
	for l, n := range maxPending {
		if slowest == "" || n > maxPending[slowest] {
			slowest = l
		}
	}
	fastDone := fast.Calls()[29].At.Before(slow.Calls()[29].At)
	// One message for all three: Slowest and FastDoneFirst alone are each
	// a choice of two, and a message per finding would say which to flip.
	if slowest != Slowest || fastDone != FastDoneFirst || pops != PopSpans {
		t.Errorf("your findings are not what the run shows: Slowest is the informer.listener whose pop spans had the largest informer.listener.pending (you wrote %q), FastDoneFirst what the handlers' last calls (Recorder.Calls, At) show, PopSpans how many notifications the listeners popped between them (you wrote %d)", Slowest, PopSpans)
	}
}
