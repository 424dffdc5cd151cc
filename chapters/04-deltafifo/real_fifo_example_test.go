package deltafifo_test

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
)

// describeEntry prints a RealFIFO entry: its type and object(s) as name@rv.
func describeEntry(d deltafifo.Delta) string {
	switch o := d.Object.(type) {
	case *corev1.Pod:
		return fmt.Sprintf("%s %s@%s", d.Type, o.Name, o.ResourceVersion)
	case deltafifo.ReplacedAllInfo:
		var names []string
		for _, obj := range o.Objects {
			p := obj.(*corev1.Pod)
			names = append(names, p.Name+"@"+p.ResourceVersion)
		}
		return fmt.Sprintf("%s rv=%s [%s]", d.Type, o.ResourceVersion, strings.Join(names, " "))
	case deltafifo.BookmarkInfo:
		return fmt.Sprintf("%s rv=%s", d.Type, o.ResourceVersion)
	}
	return string(d.Type)
}

// Configured as client-go v0.37.2's informers configure it, the RealFIFO
// hands out every change on its own and in the order it came: the relist as
// one entry, then each update, where a DeltaFIFO would have handed a's
// three states out together, ahead of b's.
func ExampleRealFIFO() {
	q := deltafifo.NewRealFIFOWithOptions(deltafifo.RealFIFOOptions{
		AtomicEvents:          true,
		UnlockWhileProcessing: true,
		EmitDeltaTypeBookmark: true,
	})
	_ = q.Replace([]any{pod("a", "1"), pod("b", "1")}, "1")
	_ = q.Update(pod("a", "2"))
	_ = q.Update(pod("b", "3"))
	_ = q.Update(pod("a", "4"))
	_ = q.Bookmark("5")
	for range 5 {
		_, _ = q.Pop(func(obj any, isInInitialList bool) error {
			fmt.Println(describeEntry(obj.(deltafifo.Deltas)[0]), "initial:", isInInitialList)
			return nil
		})
	}
	fmt.Println("synced:", q.HasSynced())
	// Output:
	// ReplacedAll rv=1 [a@1 b@1] initial: true
	// Updated a@2 initial: false
	// Updated b@3 initial: false
	// Updated a@4 initial: false
	// Bookmark rv=5 initial: false
	// synced: true
}

// PopBatch hands out a run of queued entries at once, stopping before a
// key already in the run (so a batch holds one state per object) and before
// an entry that cannot be batched, which comes out alone.
func ExampleRealFIFO_PopBatch() {
	q := deltafifo.NewRealFIFOWithOptions(deltafifo.RealFIFOOptions{AtomicEvents: true, EmitDeltaTypeBookmark: true})
	_ = q.Add(pod("a", "1"))
	_ = q.Add(pod("b", "2"))
	_ = q.Update(pod("a", "3"))
	_ = q.Add(pod("c", "4"))
	_ = q.Bookmark("5")
	_ = q.Add(pod("d", "6"))
	for range 4 {
		_ = q.PopBatch(func(deltas []deltafifo.Delta, _ bool) error {
			var parts []string
			for _, d := range deltas {
				parts = append(parts, describeEntry(d))
			}
			fmt.Println("batch: ", strings.Join(parts, ", "))
			return nil
		}, func(obj any, _ bool) error {
			fmt.Println("single:", describeEntry(obj.(deltafifo.Deltas)[0]))
			return nil
		})
	}
	// Output:
	// batch:  Added a@1, Added b@2
	// batch:  Updated a@3, Added c@4
	// single: Bookmark rv=5
	// single: Added d@6
}
