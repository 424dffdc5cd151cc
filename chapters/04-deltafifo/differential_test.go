package deltafifo

// The differential test: the same operation sequences go to client-go's
// DeltaFIFO and to ours, and every Pop must hand out the same Deltas (types,
// objects, tombstone keys), with the same isInInitialList, and HasSynced must
// agree after every operation. Each side has its own "informer cache" as
// KnownObjects, updated from its own pops the way an informer updates it.
//
// A sequence is decoded from bytes, so the seeded random run below and the
// fuzz target FuzzDeltaFIFO share one harness.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// differentialSequences is how many random sequences a run without the
// race detector checks (the issue asks for at least 10,000); under it, a
// tenth (testutil.OracleSteps).
var differentialSequences = testutil.OracleSteps(10000)

func TestDifferentialAgainstClientGo(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 0))
	pops := 0
	for i := range differentialSequences {
		data := make([]byte, 8+r.IntN(120))
		for j := range data {
			data[j] = byte(r.UintN(256))
		}
		n, err := runDifferential(data)
		if err != nil {
			t.Fatalf("sequence %d (%x): %v", i, data, err)
		}
		pops += n
	}
	if pops < differentialSequences {
		t.Fatalf("only %d pops over %d sequences: the generator does not exercise Pop", pops, differentialSequences)
	}
}

func FuzzDeltaFIFO(f *testing.F) {
	f.Add([]byte{0, 0, 1, 5, 1, 3, 2, 0, 1, 5, 0})
	f.Add([]byte{7, 3, 3, 0, 1, 2, 4, 5, 5, 5, 2, 1, 6, 0})
	f.Add([]byte{3, 1, 0, 1, 1, 2, 1, 3, 1, 0, 4, 5, 5, 5, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := runDifferential(data); err != nil {
			t.Fatalf("%x: %v", data, err)
		}
	})
}

// side is one implementation under test with its own cache.
type side struct {
	add, update, del func(any) error
	replace          func([]any, string) error
	resync           func() error
	pop              func() (string, bool, error) // description of the popped deltas, isInInitialList
	hasSynced        func() bool
	close            func()
	// queueLen is set for ours only (white-box): client-go's DeltaFIFO has no
	// way to ask, so its Pop is only called when ours has something.
	queueLen  func() int
	invariant func() error
	// popBatch is ours only: DeltaFIFO.PopKeys, compared with as many
	// single pops of client-go's queue.
	popBatch func(max int) ([]popped, error)
}

func describeObj(o any) string {
	p := o.(*corev1.Pod)
	return p.Name + "@" + p.ResourceVersion + "/" + p.Labels["t"]
}

func ours(known bool, replaced, transform bool, preload []any) side {
	cache := store.NewStore(DeletionHandlingMetaNamespaceKeyFunc)
	for _, o := range preload {
		_ = cache.Add(o)
	}
	opts := DeltaFIFOOptions{KeyFunction: DeletionHandlingMetaNamespaceKeyFunc, EmitDeltaTypeReplaced: replaced}
	if known {
		opts.KnownObjects = sortedKeys{cache}
	}
	if transform {
		opts.Transformer = markTransformed
	}
	q := NewDeltaFIFOWithOptions(opts)
	return side{
		add: q.Add, update: q.Update, del: q.Delete, replace: q.Replace, resync: q.Resync,
		hasSynced: q.HasSynced, close: q.Close,
		invariant: q.checkInvariant,
		queueLen: func() int {
			q.lock.Lock()
			defer q.lock.Unlock()
			return len(q.queue)
		},
		pop: func() (string, bool, error) {
			var got []popped
			_, err := q.Pop(oursProcess(cache, &got))
			if len(got) == 0 {
				return "", false, err
			}
			return got[0].desc, got[0].initial, err
		},
		popBatch: func(max int) ([]popped, error) {
			var got []popped
			_, err := q.PopKeys(oursProcess(cache, &got), max)
			return got, err
		},
	}
}

type popped struct {
	desc    string
	initial bool
}

// oursProcess describes each popped Deltas and applies it to the cache, as
// an informer would.
func oursProcess(cache store.Store, got *[]popped) PopProcessFunc {
	return func(obj any, isInInitialList bool) error {
		var desc []string
		for _, d := range obj.(Deltas) {
			o := d.Object
			if t, ok := o.(DeletedFinalStateUnknown); ok {
				desc = append(desc, fmt.Sprintf("%s:tombstone(%s,%v)", d.Type, t.Key, descOrNil(t.Obj)))
				o = t
			} else {
				desc = append(desc, string(d.Type)+":"+describeObj(o))
			}
			if d.Type == Deleted {
				_ = cache.Delete(o)
			} else {
				_ = cache.Update(o)
			}
		}
		*got = append(*got, popped{strings.Join(desc, " "), isInInitialList})
		return nil
	}
}

func theirs(known bool, replaced, transform bool, preload []any) side {
	cache := kcache.NewStore(kcache.DeletionHandlingMetaNamespaceKeyFunc)
	for _, o := range preload {
		_ = cache.Add(o)
	}
	opts := kcache.DeltaFIFOOptions{KeyFunction: kcache.DeletionHandlingMetaNamespaceKeyFunc, EmitDeltaTypeReplaced: replaced}
	if known {
		opts.KnownObjects = sortedKeys{cache}
	}
	if transform {
		opts.Transformer = kcache.TransformFunc(markTransformed)
	}
	q := kcache.NewDeltaFIFOWithOptions(opts)
	return side{
		add: q.Add, update: q.Update, del: q.Delete, replace: q.Replace, resync: q.Resync,
		hasSynced: q.HasSynced, close: q.Close,
		pop: func() (string, bool, error) {
			var desc []string
			var initial bool
			_, err := q.Pop(func(obj any, isInInitialList bool) error {
				initial = isInInitialList
				for _, d := range obj.(kcache.Deltas) {
					o := d.Object
					if t, ok := o.(kcache.DeletedFinalStateUnknown); ok {
						desc = append(desc, fmt.Sprintf("%s:tombstone(%s,%v)", d.Type, t.Key, descOrNil(t.Obj)))
					} else {
						desc = append(desc, string(d.Type)+":"+describeObj(o))
					}
					if d.Type == kcache.Deleted {
						_ = cache.Delete(o)
					} else {
						_ = cache.Update(o)
					}
				}
				return nil
			})
			return strings.Join(desc, " "), initial, err
		},
	}
}

// sortedKeys gives ListKeys a fixed order. Replace queues tombstones for
// known-but-unlisted keys, and Resync queues Syncs, in ListKeys order, which
// for a real cache is map order: random, in client-go as in ours. Sorting it
// on both sides makes the order of keys in the two queues comparable.
type sortedKeys struct{ KeyListerGetter }

func (s sortedKeys) ListKeys() []string {
	k := s.KeyListerGetter.ListKeys()
	slices.Sort(k)
	return k
}

func descOrNil(o any) string {
	if o == nil {
		return "nil"
	}
	return describeObj(o)
}

// markTransformed copies the pod and appends "x" to its "t" label: a second
// transformation of the same object would show as "xx".
func markTransformed(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	p = p.DeepCopy()
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels["t"] += "x"
	return p, nil
}

// runDifferential decodes and runs one sequence and returns how many pops it
// compared, or the first difference.
func runDifferential(data []byte) (int, error) {
	if len(data) == 0 {
		return 0, nil
	}
	cfg := data[0]
	known, replaced, transform := cfg&1 != 0, cfg&2 != 0, cfg&4 != 0
	// Bit 8: the informer's cache already holds objects before the first
	// Replace, as after a restart with a warm cache; only then can the first
	// Replace queue tombstones, which HasSynced must wait for too.
	var preload []any
	if cfg&8 != 0 {
		for i := range 3 {
			preload = append(preload, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%d", i), ResourceVersion: "0"}})
		}
	}
	a, b := ours(known, replaced, transform, preload), theirs(known, replaced, transform, preload)
	rv := 0
	newPod := func(i byte) *corev1.Pod {
		rv++
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%d", i%6), ResourceVersion: fmt.Sprint(rv)}}
	}
	pops := 0
	next := func(i *int) byte {
		if *i >= len(data) {
			return 0
		}
		v := data[*i]
		*i++
		return v
	}
	sameErr := func(op string, x, y error) error {
		if (x == nil) != (y == nil) {
			return fmt.Errorf("%s: ours %v, client-go %v", op, x, y)
		}
		return nil
	}
	popTheirs := func(step int, got popped) error {
		type res struct {
			desc    string
			initial bool
		}
		ch := make(chan res, 1)
		go func() { d, in, _ := b.pop(); ch <- res{d, in} }()
		select {
		case want := <-ch:
			if got.desc != want.desc || got.initial != want.initial {
				return fmt.Errorf("step %d PopKeys:\n ours:      %q initial=%v\n client-go: %q initial=%v", step, got.desc, got.initial, want.desc, want.initial)
			}
			pops++
			return nil
		case <-time.After(5 * time.Second):
			return fmt.Errorf("step %d: ours batch-popped %q but client-go's queue is empty", step, got.desc)
		}
	}
	popBoth := func(step int) error {
		got, gotInitial, errA := a.pop()
		type res struct {
			desc    string
			initial bool
			err     error
		}
		ch := make(chan res, 1)
		go func() { d, in, err := b.pop(); ch <- res{d, in, err} }()
		var want res
		select {
		case want = <-ch:
		case <-time.After(5 * time.Second):
			return fmt.Errorf("step %d: ours popped %q but client-go's queue is empty", step, got)
		}
		if errors.Is(errA, ErrFIFOClosed) != errors.Is(want.err, kcache.ErrFIFOClosed) {
			return fmt.Errorf("step %d Pop: ours err %v, client-go err %v", step, errA, want.err)
		}
		if got != want.desc || gotInitial != want.initial {
			return fmt.Errorf("step %d Pop:\n ours:      %q initial=%v\n client-go: %q initial=%v", step, got, gotInitial, want.desc, want.initial)
		}
		pops++
		return nil
	}

	i := 1
	for step := 0; i < len(data); step++ {
		var err error
		switch op := next(&i) % 8; op {
		case 0:
			p := newPod(next(&i))
			err = sameErr("Add", a.add(p), b.add(p))
		case 1:
			p := newPod(next(&i))
			err = sameErr("Update", a.update(p), b.update(p))
		case 2:
			p := newPod(next(&i))
			err = sameErr("Delete", a.del(p), b.del(p))
		case 3:
			n := int(next(&i) % 7)
			list := make([]any, 0, n)
			for range n {
				list = append(list, newPod(next(&i)))
			}
			err = sameErr("Replace", a.replace(list, fmt.Sprint(rv)), b.replace(list, fmt.Sprint(rv)))
		case 4:
			err = sameErr("Resync", a.resync(), b.resync())
		case 7:
			// A batch pop of ours against single pops of client-go's.
			if a.queueLen() > 0 {
				var got []popped
				got, err = a.popBatch(1 + int(next(&i)%3))
				for j := 0; err == nil && j < len(got); j++ {
					err = popTheirs(step, got[j])
				}
			}
		default:
			if a.queueLen() > 0 {
				err = popBoth(step)
			}
		}
		if err != nil {
			return pops, fmt.Errorf("step %d: %w", step, err)
		}
		if err := a.invariant(); err != nil {
			return pops, fmt.Errorf("step %d: invariant: %w", step, err)
		}
		if a.hasSynced() != b.hasSynced() {
			return pops, fmt.Errorf("step %d: HasSynced ours %v, client-go %v", step, a.hasSynced(), b.hasSynced())
		}
	}
	// Drain both: whatever is left must match too.
	a.close()
	b.close()
	for {
		got, _, errA := a.pop()
		want, _, errB := b.pop()
		if errors.Is(errA, ErrFIFOClosed) || errors.Is(errB, kcache.ErrFIFOClosed) {
			if !errors.Is(errA, ErrFIFOClosed) || !errors.Is(errB, kcache.ErrFIFOClosed) {
				return pops, fmt.Errorf("drain: ours %q/%v, client-go %q/%v", got, errA, want, errB)
			}
			return pops, nil
		}
		if got != want {
			return pops, fmt.Errorf("drain:\n ours:      %q\n client-go: %q", got, want)
		}
		pops++
	}
}
