package deltafifo

// The side-by-side tables of docs/04-deltafifo.md: one scripted sequence of
// reflector calls goes to the three queues an informer has run on (the
// DeltaFIFO, the per-event RealFIFO, the atomic RealFIFO of v0.37.2), and
// the test renders what each pops and what a handler behind each is told.
//
// The tables are not written by hand. TestSideBySide renders them, requires
// client-go's queues to pop exactly what ours pop for the same script (so a
// table row is client-go's behaviour, not only ours), and requires the doc's
// generated blocks to be byte-for-byte what it rendered. After a deliberate
// change, `go test ./chapters/04-deltafifo -run TestSideBySide -update`
// rewrites the blocks, the way `go test ./test/doccheck -update` does
// for quoted code.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
)

var updateDoc = flag.Bool("update", false, "rewrite the generated side-by-side tables in docs/04-deltafifo.md")

const sideBySideDoc = "../../docs/04-deltafifo.md"

// sbsOp is one reflector call of the script.
type sbsOp struct {
	name string // Add, Update, Delete, Replace, Resync, Bookmark
	objs []*corev1.Pod
	rv   string // Replace's and Bookmark's resourceVersion
}

func (o sbsOp) String() string {
	names := make([]string, len(o.objs))
	for i, p := range o.objs {
		names[i] = p.Name + "@" + p.ResourceVersion
	}
	switch o.name {
	case "Replace":
		return fmt.Sprintf("Replace([%s], %s)", strings.Join(names, " "), o.rv)
	case "Bookmark":
		return fmt.Sprintf("Bookmark(%s)", o.rv)
	}
	return o.name + "(" + strings.Join(names, " ") + ")"
}

// sbsWriter is what the reflector calls, on our queues and client-go's.
type sbsWriter interface {
	Add(any) error
	Update(any) error
	Delete(any) error
	Replace([]any, string) error
	Resync() error
}

func (o sbsOp) apply(q sbsWriter) error {
	var obj any
	if len(o.objs) > 0 {
		obj = o.objs[0]
	}
	switch o.name {
	case "Add":
		return q.Add(obj)
	case "Update":
		return q.Update(obj)
	case "Delete":
		return q.Delete(obj)
	case "Replace":
		list := make([]any, len(o.objs))
		for i, p := range o.objs {
			list[i] = p
		}
		return q.Replace(list, o.rv)
	case "Resync":
		return q.Resync()
	case "Bookmark":
		// Only a store that has the method gets bookmarks from the
		// reflector (reflector.ReflectorBookmarkStore); the DeltaFIFO has
		// none.
		if b, ok := q.(interface{ Bookmark(string) error }); ok {
			return b.Bookmark(o.rv)
		}
		return nil
	}
	return fmt.Errorf("unknown op %q", o.name)
}

func sbsPod(name, rv string) *corev1.Pod { return mk(name, rv) }

// sideBySideScript: phases of reflector calls; after each phase the
// consumer pops until the queue is empty. Phase 1 is the initial LIST and a
// first watch event; phase 2 is watch events that arrive while the consumer
// is busy, then the watch breaks (410) and a relist no longer has b (deleted
// while the watch was down) nor c (its DELETED event is still queued) but
// has a new e; phase 3 is one more event and a resync.
var sideBySideScript = [][]sbsOp{
	{
		{name: "Replace", objs: []*corev1.Pod{sbsPod("a", "1"), sbsPod("b", "1")}, rv: "1"},
		{name: "Add", objs: []*corev1.Pod{sbsPod("c", "2")}},
	},
	{
		{name: "Update", objs: []*corev1.Pod{sbsPod("a", "3")}},
		{name: "Update", objs: []*corev1.Pod{sbsPod("b", "4")}},
		{name: "Update", objs: []*corev1.Pod{sbsPod("a", "5")}},
		{name: "Delete", objs: []*corev1.Pod{sbsPod("c", "6")}},
		{name: "Add", objs: []*corev1.Pod{sbsPod("d", "7")}},
		{name: "Bookmark", rv: "7"},
		{name: "Replace", objs: []*corev1.Pod{sbsPod("a", "8"), sbsPod("d", "7"), sbsPod("e", "9")}, rv: "9"},
	},
	{
		{name: "Update", objs: []*corev1.Pod{sbsPod("e", "10")}},
		{name: "Resync"},
	},
}

// The three queues, configured as client-go's informers configure them.
const (
	sbsDeltaFIFO = iota // KnownObjects, EmitDeltaTypeReplaced: informers up to 1.32
	sbsPerEvent         // RealFIFO with KnownObjects: informers 1.33 to 1.35
	sbsAtomic           // RealFIFO AtomicEvents, UnlockWhileProcessing, EmitDeltaTypeBookmark: 1.36, v0.37.2
	sbsQueues
)

// sbsRun is what one queue did with the script, per phase: one line per
// process call, describing what was popped and what the handler was told.
type sbsRun struct {
	pops  [][]string
	calls [][]string
	// mostPerPop is the longest Deltas a single Pop handed out.
	mostPerPop int
}

// describeSBSDelta renders one popped entry for the table.
func describeSBSDelta(d Delta) string {
	switch o := d.Object.(type) {
	case *corev1.Pod:
		return fmt.Sprintf("%s@%s", d.Type, o.ResourceVersion)
	case DeletedFinalStateUnknown:
		if p, ok := o.Obj.(*corev1.Pod); ok {
			return fmt.Sprintf("%s(tombstone @%s)", d.Type, p.ResourceVersion)
		}
		return fmt.Sprintf("%s(tombstone)", d.Type)
	case ReplacedAllInfo:
		names := make([]string, len(o.Objects))
		for i, obj := range o.Objects {
			p := obj.(*corev1.Pod)
			names[i] = p.Name + "@" + p.ResourceVersion
		}
		return fmt.Sprintf("ReplacedAll(rv %s: %s)", o.ResourceVersion, strings.Join(names, " "))
	case SyncAllInfo:
		return "SyncAll"
	case BookmarkInfo:
		return fmt.Sprintf("Bookmark(rv %s)", o.ResourceVersion)
	}
	return fmt.Sprintf("%s(%T)", d.Type, d.Object)
}

// describeSBSPop renders what one Pop handed out: a key and its deltas, or
// an atomic entry on its own.
func describeSBSPop(deltas []Delta) string {
	parts := make([]string, len(deltas))
	for i, d := range deltas {
		parts[i] = describeSBSDelta(d)
	}
	key, err := DeletionHandlingMetaNamespaceKeyFunc(deltas[0].Object)
	if err != nil { // an atomic entry or a bookmark: no key
		return strings.Join(parts, " ")
	}
	return strings.TrimPrefix(key, "ns/") + ": " + strings.Join(parts, " ")
}

func describeSBSBatch(batch []Delta) string {
	parts := make([]string, len(batch))
	for i, d := range batch {
		parts[i] = describeSBSPop([]Delta{d})
	}
	return "batch[" + strings.Join(parts, ", ") + "]"
}

func podRV(obj any) string {
	switch o := obj.(type) {
	case *corev1.Pod:
		return o.Name + "@" + o.ResourceVersion
	case DeletedFinalStateUnknown:
		if p, ok := o.Obj.(*corev1.Pod); ok {
			return "tombstone " + p.Name + "@" + p.ResourceVersion
		}
		return "tombstone " + o.Key
	}
	return fmt.Sprintf("%T", obj)
}

// handlerCall renders what a ResourceEventHandler is called with for one
// change, mapped as upstream's processDeltas maps it.
func handlerCall(d Delta, old any, initial bool) string {
	switch {
	case d.Type == Deleted:
		return "OnDelete(" + podRV(d.Object) + ")"
	case old == nil:
		if initial {
			return "OnAdd(" + podRV(d.Object) + ", initial)"
		}
		return "OnAdd(" + podRV(d.Object) + ")"
	}
	return "OnUpdate(" + podRV(old) + "→" + podRV(d.Object) + ")"
}

// runOurSideBySide runs the script on one of our queues, with chapter 4's
// Consumer behind it writing the cache the queue knows (KnownObjects) and
// recording the handler calls. batch pops with PopBatch, as a v0.37.2
// informer does; otherwise with Pop.
func runOurSideBySide(t *testing.T, which int, batch bool) sbsRun {
	t.Helper()
	cache := store.NewStore(DeletionHandlingMetaNamespaceKeyFunc)
	var q interface {
		sbsWriter
		Pop(PopProcessFunc) (any, error)
	}
	var queued func() int
	switch which {
	case sbsDeltaFIFO:
		f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: sortedKeys{cache}, EmitDeltaTypeReplaced: true})
		q, queued = f, func() int { f.lock.Lock(); defer f.lock.Unlock(); return len(f.queue) }
	case sbsPerEvent:
		f := NewRealFIFOWithOptions(RealFIFOOptions{KnownObjects: sortedKeys{cache}})
		q, queued = f, func() int { f.lock.Lock(); defer f.lock.Unlock(); return f.len_locked() }
	case sbsAtomic:
		f := NewRealFIFOWithOptions(realFIFODefaults("", nil))
		q, queued = f, func() int { f.lock.Lock(); defer f.lock.Unlock(); return f.len_locked() }
	}
	var run sbsRun
	var calls []string
	consumer := &Consumer{
		Store:   cache,
		KeyFunc: DeletionHandlingMetaNamespaceKeyFunc,
		Handler: func(_ context.Context, d Delta, old any, initial bool) {
			calls = append(calls, handlerCall(d, old, initial))
		},
	}
	initialMark := func(initial bool) string {
		if initial {
			return " (initial)"
		}
		return ""
	}
	for _, phase := range sideBySideScript {
		for _, op := range phase {
			require.NoError(t, op.apply(q), "%s", op)
		}
		var pops, handled []string
		for queued() > 0 {
			calls = nil
			if batch {
				err := q.(*RealFIFO).PopBatch(func(deltas []Delta, initial bool) error {
					pops = append(pops, describeSBSBatch(deltas)+initialMark(initial))
					return consumer.ProcessDeltasInBatch(deltas, initial)
				}, func(obj any, initial bool) error {
					pops = append(pops, describeSBSPop(obj.(Deltas))+initialMark(initial))
					return consumer.ProcessDeltas(obj.(Deltas), initial)
				})
				require.NoError(t, err)
			} else {
				_, err := q.Pop(func(obj any, initial bool) error {
					pops = append(pops, describeSBSPop(obj.(Deltas))+initialMark(initial))
					run.mostPerPop = max(run.mostPerPop, len(obj.(Deltas)))
					return consumer.ProcessDeltas(obj.(Deltas), initial)
				})
				require.NoError(t, err)
			}
			if len(calls) > 0 {
				handled = append(handled, strings.Join(calls, "; "))
			}
		}
		run.pops = append(run.pops, pops)
		run.calls = append(run.calls, handled)
	}
	return run
}

// fromClientGo converts a client-go delta to ours, for describing.
func fromClientGo(d kcache.Delta) Delta {
	obj := d.Object
	switch o := obj.(type) {
	case kcache.DeletedFinalStateUnknown:
		obj = DeletedFinalStateUnknown{Key: o.Key, Obj: o.Obj}
	case kcache.ReplacedAllInfo:
		obj = ReplacedAllInfo{ResourceVersion: o.ResourceVersion, Objects: o.Objects}
	case kcache.SyncAllInfo:
		obj = SyncAllInfo{}
	case kcache.BookmarkInfo:
		obj = BookmarkInfo{ResourceVersion: o.ResourceVersion}
	}
	return Delta{Type: DeltaType(d.Type), Object: obj}
}

// runTheirSideBySide runs the script on client-go's queue of the same
// configuration, popping in each phase as many times as ours did (client-go
// has no way to ask a queue's length), with a cache kept from the pops for
// the queues that read one. It returns what was popped and, after Close,
// whatever was still queued: nothing, if the two queues agree.
//
// It runs in a synctest bubble so that a client-go queue holding fewer
// entries than ours fails the test instead of hanging it: each Pop runs in a
// goroutine, and once synctest.Wait returns, a Pop that has not returned is
// blocked for good in an empty queue.
func runTheirSideBySide(t *testing.T, which int, batch bool, popsPerPhase []int) (pops [][]string, left []string) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		pops, left = runTheirSideBySideInBubble(t, which, batch, popsPerPhase)
	})
	return pops, left
}

func runTheirSideBySideInBubble(t *testing.T, which int, batch bool, popsPerPhase []int) ([][]string, []string) {
	cache := kcache.NewStore(kcache.DeletionHandlingMetaNamespaceKeyFunc)
	var q interface {
		sbsWriter
		Pop(kcache.PopProcessFunc) (any, error)
		Close()
	}
	switch which {
	case sbsDeltaFIFO:
		q = kcache.NewDeltaFIFOWithOptions(kcache.DeltaFIFOOptions{KnownObjects: sortedKeys{cache}, EmitDeltaTypeReplaced: true})
	case sbsPerEvent:
		q = kcache.NewRealFIFOWithOptions(kcache.RealFIFOOptions{KeyFunction: kcache.MetaNamespaceKeyFunc, KnownObjects: sortedKeys{cache}})
	case sbsAtomic:
		q = kcache.NewRealFIFOWithOptions(kcache.RealFIFOOptions{KeyFunction: kcache.MetaNamespaceKeyFunc,
			AtomicEvents: true, UnlockWhileProcessing: true, EmitDeltaTypeBookmark: true})
	}
	apply := func(deltas []kcache.Delta) []Delta {
		out := make([]Delta, len(deltas))
		for i, d := range deltas {
			switch d.Type {
			case kcache.Deleted:
				_ = cache.Delete(d.Object)
			case kcache.Added, kcache.Updated, kcache.Replaced, kcache.Sync:
				_ = cache.Update(d.Object)
			}
			out[i] = fromClientGo(d)
		}
		return out
	}
	initialMark := func(initial bool) string {
		if initial {
			return " (initial)"
		}
		return ""
	}
	// pop runs one Pop or PopBatch of client-go's queue; false if the queue
	// had nothing to pop.
	pop := func(record func(string)) bool {
		done := make(chan error, 1)
		go func() {
			if batch {
				done <- q.(*kcache.RealFIFO).PopBatch(func(deltas []kcache.Delta, initial bool) error {
					record(describeSBSBatch(apply(deltas)) + initialMark(initial))
					return nil
				}, func(obj any, initial bool) error {
					record(describeSBSPop(apply(obj.(kcache.Deltas))) + initialMark(initial))
					return nil
				})
				return
			}
			_, err := q.Pop(func(obj any, initial bool) error {
				record(describeSBSPop(apply(obj.(kcache.Deltas))) + initialMark(initial))
				return nil
			})
			done <- err
		}()
		synctest.Wait()
		select {
		case err := <-done:
			require.NoError(t, err)
			return true
		default:
			q.Close() // releases the blocked Pop
			<-done
			return false
		}
	}
	var pops [][]string
	for i, phase := range sideBySideScript {
		for _, op := range phase {
			require.NoError(t, op.apply(q), "client-go: %s", op)
		}
		var phasePops []string
		for n := range popsPerPhase[i] {
			if !pop(func(s string) { phasePops = append(phasePops, s) }) {
				t.Fatalf("client-go's queue was empty after %d pops in phase %d, where ours popped %d times: %q",
					n, i+1, popsPerPhase[i], phasePops)
			}
		}
		pops = append(pops, phasePops)
	}
	q.Close()
	var left []string
	for {
		_, err := q.Pop(func(obj any, _ bool) error {
			left = append(left, describeSBSPop(apply(obj.(kcache.Deltas))))
			return nil
		})
		if errors.Is(err, kcache.ErrFIFOClosed) {
			return pops, left
		}
		require.NoError(t, err)
	}
}

// renderSideBySide renders a markdown table: the script's calls per phase,
// then one column per queue.
func renderSideBySide(headers []string, cols [][][]string) string {
	var b strings.Builder
	b.WriteString("| reflector calls, then pop until empty |")
	for _, h := range headers {
		b.WriteString(" " + h + " |")
	}
	b.WriteString("\n|---|")
	for range headers {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for i, phase := range sideBySideScript {
		ops := make([]string, len(phase))
		for j, op := range phase {
			ops[j] = "`" + op.String() + "`"
		}
		b.WriteString("| " + strings.Join(ops, "<br>") + " |")
		for _, col := range cols {
			cell := make([]string, len(col[i]))
			for j, line := range col[i] {
				cell[j] = "`" + line + "`"
			}
			if len(cell) == 0 {
				cell = []string{"nothing"}
			}
			b.WriteString(" " + strings.Join(cell, "<br>") + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// generatedBlock returns the text between `<!-- generated: name ... -->`
// and `<!-- end generated -->` in doc, and where it sits.
func generatedBlock(doc, name string) (body string, start, end int, err error) {
	open := "<!-- generated: " + name + " "
	i := strings.Index(doc, open)
	if i < 0 {
		return "", 0, 0, fmt.Errorf("%s has no %q marker", sideBySideDoc, open)
	}
	nl := strings.Index(doc[i:], "-->\n")
	if nl < 0 {
		return "", 0, 0, fmt.Errorf("%s: marker %q is not closed", sideBySideDoc, open)
	}
	start = i + nl + len("-->\n")
	e := strings.Index(doc[start:], "<!-- end generated -->")
	if e < 0 {
		return "", 0, 0, fmt.Errorf("%s: block %q has no end marker", sideBySideDoc, name)
	}
	end = start + e
	return doc[start:end], start, end, nil
}

// TestSideBySide runs the script on the three queues, checks each against
// client-go's queue of the same configuration, and checks the doc's two
// tables against what was rendered.
func TestSideBySide(t *testing.T) {
	var runs [sbsQueues]sbsRun
	for which := range sbsQueues {
		runs[which] = runOurSideBySide(t, which, false)
	}
	batched := runOurSideBySide(t, sbsAtomic, true)

	// Every pop of ours is what client-go's queue pops, Pop for Pop (and,
	// for the informer's PopBatch, batch for batch), and neither queue has
	// anything left.
	check := func(name string, which int, batch bool, ours sbsRun) {
		counts := make([]int, len(ours.pops))
		for i, p := range ours.pops {
			counts[i] = len(p)
		}
		theirs, left := runTheirSideBySide(t, which, batch, counts)
		require.Equal(t, ours.pops, theirs, "%s: client-go's queue popped something else", name)
		require.Empty(t, left, "%s: client-go's queue still held entries after the script", name)
	}
	check("DeltaFIFO", sbsDeltaFIFO, false, runs[sbsDeltaFIFO])
	check("RealFIFO per event", sbsPerEvent, false, runs[sbsPerEvent])
	check("RealFIFO atomic", sbsAtomic, false, runs[sbsAtomic])
	check("RealFIFO atomic, PopBatch", sbsAtomic, true, batched)

	// The claims the doc's prose makes about the tables, so that a change
	// of script that breaks one fails here and not only in a reader's eye.
	require.Contains(t, runs[sbsDeltaFIFO].pops[1], "a: Updated@3 Updated@5 Replaced@8", "the DeltaFIFO coalesces a key's changes")
	for _, which := range []int{sbsPerEvent, sbsAtomic} {
		require.Equal(t, 1, runs[which].mostPerPop, "a RealFIFO's Pop hands out one entry")
	}
	require.Len(t, runs[sbsAtomic].pops[1], 7, "atomic RealFIFO: five watch events, a bookmark and one ReplacedAll entry")
	require.Equal(t, flatten(runs[sbsPerEvent].calls[1]), flatten(runs[sbsAtomic].calls[1]),
		"the atomic relist tells handlers what the per-event relist told them, in the same order")
	require.NotEqual(t, flatten(runs[sbsPerEvent].calls[2]), flatten(runs[sbsAtomic].calls[2]),
		"an atomic resync replays the cache after e's update, a per-event one skips the queued e")
	require.Equal(t, flatten(runs[sbsAtomic].calls[1]), flatten(batched.calls[1]), "PopBatch changes grouping, not the calls")

	pops := renderSideBySide(
		[]string{"DeltaFIFO", "RealFIFO, per event", "RealFIFO, atomic (v0.37.2)"},
		[][][]string{runs[sbsDeltaFIFO].pops, runs[sbsPerEvent].pops, runs[sbsAtomic].pops})
	calls := renderSideBySide(
		[]string{"DeltaFIFO, Pop", "RealFIFO per event, Pop", "RealFIFO atomic, PopBatch (v0.37.2)"},
		[][][]string{runs[sbsDeltaFIFO].calls, runs[sbsPerEvent].calls, batched.calls})

	data, err := os.ReadFile(sideBySideDoc)
	require.NoError(t, err)
	doc := string(data)
	for _, block := range []struct{ name, want string }{{"side-by-side-pops", pops}, {"side-by-side-calls", calls}} {
		got, start, end, err := generatedBlock(doc, block.name)
		require.NoError(t, err)
		if *updateDoc {
			doc = doc[:start] + block.want + doc[end:]
			continue
		}
		if got != block.want {
			t.Errorf("%s: the %s table differs from what the queues do now; it should read:\n%s\n(run go test ./chapters/04-deltafifo -run TestSideBySide -update)",
				sideBySideDoc, block.name, block.want)
		}
	}
	if *updateDoc {
		require.NoError(t, os.WriteFile(sideBySideDoc, []byte(doc), 0o644))
	}
}

// flatten splits the lines of process calls into single handler calls.
func flatten(lines []string) []string {
	var out []string
	for _, l := range lines {
		out = append(out, strings.Split(l, "; ")...)
	}
	return out
}
