//go:build workshop

package popbatch

import (
	"errors"
	"slices"
	"strings"
	"testing"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestPredictions(t *testing.T) {
	q := deltafifo.NewRealFIFOWithOptions(deltafifo.RealFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc, AtomicEvents: true, EmitDeltaTypeBookmark: true})
	_ = q.Replace([]any{kit.Pod("", "a"), kit.Pod("", "b")}, "5")
	_ = q.Add(kit.Pod("", "c"))
	_ = q.Add(kit.Pod("", "d"))
	_ = q.Update(kit.Pod("", "c"))
	_ = q.Add(kit.Pod("", "e"))
	_ = q.Bookmark("9")
	_ = q.Add(kit.Pod("", "f"))
	q.Close()
	var sizes []int
	var initial []bool
	for {
		err := q.PopBatch(func(ds []deltafifo.Delta, init bool) error {
			sizes, initial = append(sizes, len(ds)), append(initial, init)
			return nil
		}, func(_ any, init bool) error {
			sizes, initial = append(sizes, 1), append(initial, init)
			return nil
		})
		if errors.Is(err, deltafifo.ErrFIFOClosed) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// One message for both, saying what kind of mistake they hold and
	// never which call is wrong: a message per prediction, each saying
	// which entry first went wrong, let a script that tries small numbers
	// and yes/no pass in a few runs.
	if !slices.Equal(Sizes, sizes) || !slices.Equal(Initial, initial) {
		says := []string{"your Sizes and Initial are not what PopBatch did"}
		if len(Sizes) != len(Initial) {
			says = append(says, "you wrote a different number of Sizes and of Initial values: one of each per PopBatch call")
		} else if len(Sizes) != len(sizes) {
			says = append(says, "PopBatch was called a different number of times than you wrote")
		}
		total, queued := 0, 0
		for _, n := range Sizes {
			total += n
		}
		for _, n := range sizes {
			queued += n
		}
		if total != queued {
			says = append(says, "your sizes do not add up to the number of entries the queue held (how many does an atomic Replace queue, and does a Bookmark queue one)")
		}
		says = append(says, "for each call, ask where the batch rule stops a run (docs/04-deltafifo.md, Batch pops) and which entries come from the initial list")
		t.Error(strings.Join(says, "; "))
	}
}
