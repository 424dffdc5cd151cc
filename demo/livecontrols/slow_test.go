package livecontrols

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/demo"
	"github.com/informer-anatomy/informer-anatomy/demo/lessons"
	"github.com/informer-anatomy/informer-anatomy/demo/telemetry"
	"github.com/informer-anatomy/informer-anatomy/demo/terminal"
)

// "make the handler slow" keeps the bound a burst keeps: with more waiting
// for the slowest listener than the slow handler handles in MaxDrain, it
// is refused 503 with the numbers and what to do, and the handler's time
// is left as it was; once the backlog has drained it is taken. Before, it
// was always taken: after a burst of 100,000 (which a fast handler may
// take, while the informer catches up) it left a quarter of an hour of
// backlog, and every later burst was refused for as long. The backlog is
// made here by a handler at half the slow time and updates written past
// the page's burst, so that it outlasts the press on a loaded machine.
func TestSlowAfterABurstKeepsTheDrainBound(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	tel, err := telemetry.New(ctx, "none", "", io.Discard)
	require.NoError(t, err)
	e, err := lessons.Start(ctx, lessons.Options{Queue: processor.RealFIFOQueue, Telemetry: tel, Tunable: true,
		TraceFilter: deltafifo.TraceKeys("no/such-object"), Printer: terminal.NewPrinter(io.Discard, io.Discard, true)})
	require.NoError(t, err)
	t.Cleanup(func() {
		e.Third().SetDelay(0)
		e.Stop()
		assert.NoError(t, tel.Shutdown(context.Background()))
	})
	le := &liveEmbedded{env: e, ctx: ctx, printer: terminal.NewPrinter(io.Discard, io.Discard, true)}
	press := func(name string) (string, error) {
		for _, c := range le.controls() {
			if c.Name == name {
				return c.Do(ctx, 0)
			}
		}
		t.Fatalf("no control %q", name)
		return "", nil
	}

	const written = 12_000
	e.Third().SetDelay(SlowDelay / 2)
	for i := range written {
		require.NoError(t, e.UpdatePod("web-1", fmt.Sprint("backlog-", i)))
	}
	msg, err := press("slow")
	require.Error(t, err, "taken: %s", msg)
	assert.Regexp(t, `^refused for now: [0-9]+ changes still wait for the informer's slowest listener; at 10ms per call \*demo.tunableHandler#2 would take [0-9hms]+ over them, past the page's bound of 1m0s \(6000 changes\): wait for them to drain, then make it slow$`, err.Error())
	assert.Equal(t, SlowDelay/2, e.Third().Delay(), "refused: the handler's time is as it was")

	e.Third().SetDelay(0)
	require.NoError(t, demo.Until(ctx, "the backlog drained", func() bool { n, err := le.backlog(); return err == nil && n == 0 }))
	msg, err = press("slow")
	require.NoError(t, err)
	assert.Equal(t, "*demo.tunableHandler#2 now takes 10ms per call", msg)
	assert.Equal(t, SlowDelay, e.Third().Delay())
}
