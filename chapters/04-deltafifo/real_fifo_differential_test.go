package deltafifo

// The RealFIFO's differential test: the same operation sequences go to
// client-go's RealFIFO and to ours, in every configuration upstream allows,
// and each step must give the same result: the same error or none from
// every call, the same entries popped (types, objects, tombstones, atomic
// entries' contents) in the same order, the same choice of batch or single
// call with the same batch, the same isInInitialList, the same HasSynced
// after every step, and the same drain after Close.
//
// A sequence is decoded from bytes, so the seeded random run and the fuzz
// target FuzzRealFIFO share one harness. data[0] picks the configuration
// (rfConfig); each further op is one byte plus its operands.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// rfSequencesPerConfig is how many random sequences a run without the race
// detector checks in each configuration (rfConfigs of them); under it, a
// tenth (testutil.OracleSteps).
var rfSequencesPerConfig = testutil.OracleSteps(800)

// The configurations upstream allows (NewRealFIFOWithOptions panics on the
// others): per-event with known objects, and atomic with or without
// bookmarks and unlocking. The byte's higher bits add a transformer and a
// warm cache.
const (
	rfPerEvent = iota
	rfAtomic
	rfAtomicBookmarks
	rfAtomicUnlock
	rfAtomicUnlockBookmarks
	rfModes

	rfTransform = 8
	rfPreload   = 16
)

type rfConfig byte

func (c rfConfig) mode() int    { return int(c&7) % rfModes }
func (c rfConfig) atomic() bool { return c.mode() != rfPerEvent }
func (c rfConfig) bookmarks() bool {
	return c.mode() == rfAtomicBookmarks || c.mode() == rfAtomicUnlockBookmarks
}
func (c rfConfig) unlock() bool {
	return c.mode() == rfAtomicUnlock || c.mode() == rfAtomicUnlockBookmarks
}
func (c rfConfig) transform() bool { return c&rfTransform != 0 }
func (c rfConfig) preload() bool   { return c&rfPreload != 0 && !c.atomic() }
func (c rfConfig) String() string {
	return fmt.Sprintf("mode=%d transform=%v preload=%v", c.mode(), c.transform(), c.preload())
}

// rfConfigs lists every distinct configuration once.
func rfConfigs() []rfConfig {
	var out []rfConfig
	for mode := range rfModes {
		for _, t := range []rfConfig{0, rfTransform} {
			out = append(out, rfConfig(mode)|t)
			if mode == rfPerEvent {
				out = append(out, rfConfig(mode)|t|rfPreload)
			}
		}
	}
	return out
}

func TestRealFIFODifferentialAgainstClientGo(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 0))
	for _, cfg := range rfConfigs() {
		pops, batches := 0, 0
		for i := range rfSequencesPerConfig {
			data := make([]byte, 8+r.IntN(100))
			for j := range data {
				data[j] = byte(r.UintN(256))
			}
			data[0] = byte(cfg)
			st, err := runRealFIFODifferential(data)
			if err != nil {
				t.Fatalf("%v, sequence %d (%x): %v", cfg, i, data, err)
			}
			pops += st.pops
			batches += st.batches
		}
		t.Logf("%v: %d pops, %d multi-entry batches", cfg, pops, batches)
		// The generator must reach what it claims to test.
		if pops < rfSequencesPerConfig || batches < rfSequencesPerConfig/10 {
			t.Fatalf("%v: only %d pops and %d multi-entry batches over %d sequences", cfg, pops, batches, rfSequencesPerConfig)
		}
	}
}

func FuzzRealFIFO(f *testing.F) {
	for _, cfg := range rfConfigs() {
		f.Add([]byte{byte(cfg), 3, 3, 0, 1, 2, 0, 1, 2, 6, 8, 4, 5, 7, 1, 9, 2})
	}
	f.Add([]byte{0 | rfPreload, 3, 2, 7, 8, 1, 3, 6, 6, 4, 8, 8, 8})
	f.Add([]byte{rfAtomicUnlock | rfTransform, 0, 1, 9, 2, 3, 1, 245, 9, 9, 4, 5, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := runRealFIFODifferential(data); err != nil {
			t.Fatalf("%x: %v", data, err)
		}
	})
}

// rfSide is one implementation under test, driven by the harness. Pops
// return a description of what the process func received.
type rfSide struct {
	add, update, del func(any) error
	replace          func([]any, string) error
	resync           func() error
	bookmark         func(string) error
	// pop and popBatch describe the call made: "single [..]" or
	// "batch [..]", isInInitialList, and the process func's or the queue's
	// error. addDuring, if not nil, is queued by the process func while it
	// runs (only where the queue unlocks while processing).
	pop       func(addDuring any) (string, bool, error)
	popBatch  func(addDuring any) (string, bool, error)
	hasSynced func() bool
	close     func()
}

// rfDescribe describes one queued object: a pod, a tombstone, an atomic
// entry's info, or anything else (the unkeyable objects the harness feeds).
func rfDescribe(o any) string {
	switch v := o.(type) {
	case nil:
		return "nil"
	case *corev1.Pod:
		return describeObj(v)
	case DeletedFinalStateUnknown:
		return fmt.Sprintf("tombstone(%s,%s)", v.Key, rfDescribe(v.Obj))
	case kcache.DeletedFinalStateUnknown:
		return fmt.Sprintf("tombstone(%s,%s)", v.Key, rfDescribe(v.Obj))
	case ReplacedAllInfo:
		return rfDescribeList(v.ResourceVersion, v.Objects)
	case kcache.ReplacedAllInfo:
		return rfDescribeList(v.ResourceVersion, v.Objects)
	case BookmarkInfo:
		return "rv=" + v.ResourceVersion
	case kcache.BookmarkInfo:
		return "rv=" + v.ResourceVersion
	case SyncAllInfo, kcache.SyncAllInfo:
		return "{}"
	}
	return fmt.Sprintf("%T(%v)", o, o)
}

func rfDescribeList(rv string, objs []any) string {
	parts := make([]string, len(objs))
	for i, o := range objs {
		parts[i] = rfDescribe(o)
	}
	return "rv=" + rv + "[" + strings.Join(parts, ",") + "]"
}

// rfFailingObject makes the process func fail, to compare how each queue
// reports a process error: pods whose resourceVersion ends in 7.
func rfFailingObject(o any) bool {
	p, ok := o.(*corev1.Pod)
	return ok && strings.HasSuffix(p.ResourceVersion, "7")
}

var errRFProcess = errors.New("process failed")

// rfTransformer is markTransformed that refuses pods labelled "boom", so
// the transformer's error paths are compared too.
func rfTransformer(obj any) (any, error) {
	if p, ok := obj.(*corev1.Pod); ok && p.Labels["boom"] != "" {
		return nil, fmt.Errorf("transformer refuses %s", p.Name)
	}
	return markTransformed(obj)
}

// rfDuring is what a process func does while it runs, where the queue
// unlocks while processing (probe): it reads HasSynced (which must stay
// false until the last initial entry has been processed) and queues
// addDuring, if not nil. Each call runs on another goroutine and reports
// "blocked" if it does not finish: the queue kept its lock, and a direct
// call would have deadlocked the test. The timeout is never reached when
// the queue behaves; it only turns a wrong lock decision into a failure
// instead of a hang.
func rfDuring(q interface {
	Add(any) error
	HasSynced() bool
}, addDuring any, probe bool) string {
	if !probe {
		return ""
	}
	call := func(f func() string) string {
		done := make(chan string, 1)
		go func() { done <- f() }()
		select {
		case s := <-done:
			return s
		case <-time.After(10 * time.Second):
			return " +blocked"
		}
	}
	out := call(func() string { return fmt.Sprintf(" synced-while-processing=%v", q.HasSynced()) })
	if addDuring != nil {
		out += call(func() string { return fmt.Sprintf(" +added(%v)", q.Add(addDuring) != nil) })
	}
	return out
}

func oursRealFIFO(cfg rfConfig, preload []any) (rfSide, *RealFIFO) {
	cache := store.NewStore(DeletionHandlingMetaNamespaceKeyFunc)
	for _, o := range preload {
		_ = cache.Add(o)
	}
	opts := RealFIFOOptions{
		KeyFunction: DeletionHandlingMetaNamespaceKeyFunc, AtomicEvents: cfg.atomic(),
		UnlockWhileProcessing: cfg.unlock(), EmitDeltaTypeBookmark: cfg.bookmarks(),
	}
	if !cfg.atomic() {
		opts.KnownObjects = sortedKeys{cache}
	}
	if cfg.transform() {
		opts.Transformer = rfTransformer
	}
	q := NewRealFIFOWithOptions(opts)
	// apply updates the cache from what was popped, as an informer would;
	// only a per-event queue reads it (KnownObjects).
	apply := func(deltas []Delta) error {
		var err error
		for _, d := range deltas {
			switch d.Type {
			case Deleted:
				_ = cache.Delete(d.Object)
			case Added, Updated, Replaced, Sync:
				_ = cache.Update(d.Object)
			}
			if rfFailingObject(d.Object) {
				err = errRFProcess
			}
		}
		return err
	}
	describe := func(deltas []Delta) string {
		parts := make([]string, len(deltas))
		for i, d := range deltas {
			parts[i] = string(d.Type) + ":" + rfDescribe(d.Object)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	side := rfSide{
		add: q.Add, update: q.Update, del: q.Delete, replace: q.Replace, resync: q.Resync, bookmark: q.Bookmark,
		hasSynced: q.HasSynced, close: q.Close,
	}
	side.pop = func(addDuring any) (string, bool, error) {
		var desc, processed string
		var initial bool
		ret, err := q.Pop(func(obj any, isInInitialList bool) error {
			d := obj.(Deltas)
			processed, initial = describe(d), isInInitialList
			desc = "single " + processed + rfDuring(q, addDuring, cfg.unlock())
			return apply(d)
		})
		if ret != nil && describe(ret.(Deltas)) != processed {
			return "", false, fmt.Errorf("Pop returned %s but processed %s", describe(ret.(Deltas)), processed)
		}
		return desc, initial, err
	}
	side.popBatch = func(addDuring any) (string, bool, error) {
		var desc string
		var initial bool
		err := q.PopBatch(func(deltas []Delta, isInInitialList bool) error {
			desc, initial = "batch "+describe(deltas), isInInitialList
			desc += rfDuring(q, addDuring, cfg.unlock())
			return apply(deltas)
		}, func(obj any, isInInitialList bool) error {
			d := obj.(Deltas)
			desc, initial = "single "+describe(d), isInInitialList
			desc += rfDuring(q, addDuring, cfg.unlock())
			return apply(d)
		})
		return desc, initial, err
	}
	return side, q
}

func theirsRealFIFO(cfg rfConfig, preload []any) rfSide {
	cache := kcache.NewStore(kcache.DeletionHandlingMetaNamespaceKeyFunc)
	for _, o := range preload {
		_ = cache.Add(o)
	}
	opts := kcache.RealFIFOOptions{
		KeyFunction: kcache.DeletionHandlingMetaNamespaceKeyFunc, AtomicEvents: cfg.atomic(),
		UnlockWhileProcessing: cfg.unlock(), EmitDeltaTypeBookmark: cfg.bookmarks(),
	}
	if !cfg.atomic() {
		opts.KnownObjects = sortedKeys{cache}
	}
	if cfg.transform() {
		opts.Transformer = rfTransformer
	}
	q := kcache.NewRealFIFOWithOptions(opts)
	apply := func(deltas []kcache.Delta) error {
		var err error
		for _, d := range deltas {
			switch d.Type {
			case kcache.Deleted:
				_ = cache.Delete(d.Object)
			case kcache.Added, kcache.Updated, kcache.Replaced, kcache.Sync:
				_ = cache.Update(d.Object)
			}
			if rfFailingObject(d.Object) {
				err = errRFProcess
			}
		}
		return err
	}
	describe := func(deltas []kcache.Delta) string {
		parts := make([]string, len(deltas))
		for i, d := range deltas {
			parts[i] = string(d.Type) + ":" + rfDescribe(d.Object)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	side := rfSide{
		add: q.Add, update: q.Update, del: q.Delete, replace: q.Replace, resync: q.Resync, bookmark: q.Bookmark,
		hasSynced: q.HasSynced, close: q.Close,
	}
	side.pop = func(addDuring any) (string, bool, error) {
		var desc string
		var initial bool
		_, err := q.Pop(func(obj any, isInInitialList bool) error {
			d := obj.(kcache.Deltas)
			desc, initial = "single "+describe(d), isInInitialList
			desc += rfDuring(q, addDuring, cfg.unlock())
			return apply(d)
		})
		return desc, initial, err
	}
	side.popBatch = func(addDuring any) (string, bool, error) {
		var desc string
		var initial bool
		err := q.PopBatch(func(deltas []kcache.Delta, isInInitialList bool) error {
			desc, initial = "batch "+describe(deltas), isInInitialList
			desc += rfDuring(q, addDuring, cfg.unlock())
			return apply(deltas)
		}, func(obj any, isInInitialList bool) error {
			d := obj.(kcache.Deltas)
			desc, initial = "single "+describe(d), isInInitialList
			desc += rfDuring(q, addDuring, cfg.unlock())
			return apply(d)
		})
		return desc, initial, err
	}
	return side
}

type rfStats struct{ pops, batches int }

// runRealFIFODifferential decodes and runs one sequence; it returns what it
// exercised, or the first difference.
func runRealFIFODifferential(data []byte) (rfStats, error) {
	var st rfStats
	if len(data) == 0 {
		return st, nil
	}
	cfg := rfConfig(data[0])
	// A warm cache (as after a restart): only then can the first Replace of
	// a per-event queue queue tombstones, which HasSynced waits for too.
	var preload []any
	if cfg.preload() {
		for i := range 3 {
			preload = append(preload, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%d", i), ResourceVersion: "0"}})
		}
	}
	a, q := oursRealFIFO(cfg, preload)
	b := theirsRealFIFO(cfg, preload)

	i := 1
	next := func() byte {
		if i >= len(data) {
			return 0
		}
		v := data[i]
		i++
		return v
	}
	rv := 0
	// newObj makes the object an operand byte names: a pod of one of six
	// keys, labelled "boom" (refused by the transformer) for bytes 240-249,
	// and for 250 and up a string, which no key function accepts.
	newObj := func() any {
		v := next()
		rv++
		if v >= 250 {
			return fmt.Sprintf("unkeyable-%d", rv)
		}
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%d", v%6), ResourceVersion: fmt.Sprint(rv)}}
		if v >= 240 {
			p.Labels = map[string]string{"boom": "1"}
		}
		return p
	}
	sameErr := func(op string, x, y error) error {
		if (x == nil) != (y == nil) {
			return fmt.Errorf("%s: ours %v, client-go %v", op, x, y)
		}
		return nil
	}
	queued := func() int {
		q.lock.Lock()
		defer q.lock.Unlock()
		return q.len_locked()
	}
	// popBoth pops ours, then client-go's on another goroutine: if ours had
	// an entry that client-go's lacks, client-go's Pop blocks, and the
	// timeout (never reached otherwise) reports it instead of hanging.
	popBoth := func(name string, ours, theirs func(any) (string, bool, error), addDuring any) error {
		got, gotInitial, errA := ours(addDuring)
		type res struct {
			desc    string
			initial bool
			err     error
		}
		ch := make(chan res, 1)
		go func() { d, in, err := theirs(addDuring); ch <- res{d, in, err} }()
		var want res
		select {
		case want = <-ch:
		case <-time.After(10 * time.Second):
			b.close() // unblocks it
			return fmt.Errorf("%s: ours popped %s but client-go's queue is empty", name, got)
		}
		if got != want.desc || gotInitial != want.initial {
			return fmt.Errorf("%s:\n ours:      %s initial=%v\n client-go: %s initial=%v", name, got, gotInitial, want.desc, want.initial)
		}
		if errors.Is(errA, errRFProcess) != errors.Is(want.err, errRFProcess) || (errA == nil) != (want.err == nil) {
			return fmt.Errorf("%s: ours err %v, client-go err %v", name, errA, want.err)
		}
		st.pops++
		if strings.HasPrefix(got, "batch ") {
			st.batches++
		}
		return nil
	}

	for step := 0; i < len(data); step++ {
		var err error
		switch op := next() % 10; op {
		case 0:
			o := newObj()
			err = sameErr("Add", a.add(o), b.add(o))
		case 1:
			o := newObj()
			err = sameErr("Update", a.update(o), b.update(o))
		case 2:
			o := newObj()
			err = sameErr("Delete", a.del(o), b.del(o))
		case 3:
			n := int(next() % 7)
			list := make([]any, 0, n)
			for range n {
				list = append(list, newObj())
			}
			err = sameErr("Replace", a.replace(list, fmt.Sprint(rv)), b.replace(list, fmt.Sprint(rv)))
		case 4:
			err = sameErr("Resync", a.resync(), b.resync())
		case 5:
			err = sameErr("Bookmark", a.bookmark(fmt.Sprint(rv)), b.bookmark(fmt.Sprint(rv)))
		case 6, 7:
			if queued() > 0 {
				err = popBoth("Pop", a.pop, b.pop, nil)
			}
		case 8:
			if queued() > 0 {
				err = popBoth("PopBatch", a.popBatch, b.popBatch, nil)
			}
		case 9:
			// The reflector queueing while the consumer processes: only a
			// queue that unlocks while processing lets it in (from the same
			// goroutine it would deadlock otherwise).
			if queued() > 0 {
				var during any
				if cfg.unlock() {
					during = newObj()
				}
				if next()%2 == 0 {
					err = popBoth("Pop+Add", a.pop, b.pop, during)
				} else {
					err = popBoth("PopBatch+Add", a.popBatch, b.popBatch, during)
				}
			}
		}
		if err != nil {
			return st, fmt.Errorf("step %d: %w", step, err)
		}
		if err := q.checkInvariant(); err != nil {
			return st, fmt.Errorf("step %d: invariant: %w", step, err)
		}
		if x, y := a.hasSynced(), b.hasSynced(); x != y {
			return st, fmt.Errorf("step %d: HasSynced ours %v, client-go %v", step, x, y)
		}
	}
	// Close and drain both (with PopBatch or Pop, as the last byte says):
	// everything still queued must come out the same, then ErrFIFOClosed.
	a.close()
	b.close()
	batch := data[len(data)-1]%2 == 0
	for {
		popA, popB := a.pop, b.pop
		if batch {
			popA, popB = a.popBatch, b.popBatch
		}
		got, _, errA := popA(nil)
		want, _, errB := popB(nil)
		closedA, closedB := errors.Is(errA, ErrFIFOClosed), errors.Is(errB, kcache.ErrFIFOClosed)
		if closedA || closedB {
			if closedA != closedB {
				return st, fmt.Errorf("drain: ours %s/%v, client-go %s/%v", got, errA, want, errB)
			}
			return st, nil
		}
		if got != want {
			return st, fmt.Errorf("drain:\n ours:      %s\n client-go: %s", got, want)
		}
		st.pops++
	}
}
